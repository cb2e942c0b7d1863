package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.engine.ReferenceRecords;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Issue 10: model files and numbers a user gets wrong give one line that says what to do, exit 2. */
class GgufCliErrorsTest {

    @TempDir
    Path dir;

    /** {@code r} failed with exit 2 and the one line {@code kvtier: <expected>}, printing nothing else. */
    static void assertOneLineError(CliRun r, String expected) {
        assertThat(r.code()).as(r.err()).isEqualTo(2);
        assertThat(r.err()).isEqualTo("kvtier: " + expected + System.lineSeparator());
        assertThat(r.out()).isEmpty();
    }

    @Test
    void aMakeModelGgufHasNoTokenizerAndIsForBenchGenerate() {
        Path m = dir.resolve("m.gguf");
        assertThat(CliRun.of("make-model", "--format", "gguf", "--dim", "64", "--hidden-dim", "128", "--layers", "1",
                "--heads", "4", "--kv-heads", "4", "--vocab", "512", "--seq-len", "64", m.toString()).code()).isZero();
        assertOneLineError(CliRun.of("generate", "--model", m.toString(), "--prompt", "hi"), "GGUF model " + m
                + " has no tokenizer (no tokenizer.ggml.* metadata): files written by make-model hold random weights"
                + " without a vocabulary and are for 'bench generate' only");
    }

    /** A new user's trial: --tokenizer with such a file said the file "carries its own tokenizer". */
    @Test
    void aTokenizerForAGgufWithoutOneSaysItHasNone() {
        Path m = dir.resolve("m.gguf");
        assertThat(CliRun.of("make-model", "--format", "gguf", "--dim", "64", "--hidden-dim", "128", "--layers", "1",
                "--heads", "4", "--kv-heads", "4", "--vocab", "512", "--seq-len", "64", m.toString()).code()).isZero();
        assertOneLineError(CliRun.of("generate", "--model", m.toString(), "--tokenizer",
                ReferenceRecords.tokenizer().toString(), "--prompt", "hi"), "GGUF model " + m
                + " has no tokenizer (no tokenizer.ggml.* metadata), and --tokenizer takes a llama2.c tokenizer for"
                + " llama2.c checkpoints only: files written by make-model hold random weights without a vocabulary"
                + " and are for 'bench generate' only");
    }

    /**
     * A tokenizer that does not fit the checkpoint's vocabulary is refused from the header, before the model
     * loads (a new user waited 51 s for a large file's load first): the checkpoint here holds a NaN weight,
     * which the load would report; and the default tokenizer is named as the default, not as --tokenizer.
     */
    @Test
    void aTokenizerOfTheWrongVocabularyIsRefusedBeforeTheModelLoads() throws IOException {
        Path m = dir.resolve("v600.bin");
        assertThat(CliRun.of("make-model", "--dim", "64", "--hidden-dim", "128", "--layers", "1", "--heads", "4",
                "--kv-heads", "4", "--vocab", "600", "--seq-len", "64", m.toString()).code()).isZero();
        poisonLastWeight(m);
        Path tok = ReferenceRecords.tokenizer();
        String tail = "tokenizer file " + tok + ": ends after 512 pieces but the model's vocabulary has 600 ("
                + String.format("%,d", Files.size(tok)) + " bytes)";
        assertOneLineError(CliRun.of("generate", "--model", m.toString(), "--tokenizer", tok.toString(), "--prompt", "hi"),
                "--tokenizer: " + tail);
        assertOneLineError(CliRun.of("serve", "--port", "0", "--model", m.toString(), "--tokenizer", tok.toString()),
                "--tokenizer: " + tail);
        CliRun byDefault = CliRun.of("generate", "--model", m.toString(), "--prompt", "hi");
        assertThat(byDefault.code()).as(byDefault.err()).isEqualTo(2);
        assertThat(byDefault.err().strip()).startsWith("kvtier: tokenizer file ")
                .contains(": ends after 512 pieces but the model's vocabulary has 600 (")
                .endsWith("bytes); that is the default tokenizer: give the model's own with --tokenizer")
                .doesNotContain("\n");
    }

    /**
     * A new user's trial: a cut checkpoint with the default tokenizer, which does not fit its vocabulary
     * either, was reported as a tokenizer problem; the cut is the news, so the load reports it.
     */
    @Test
    void aCutCheckpointIsReportedAsCutBeforeItsTokenizer() throws IOException {
        Path m = dir.resolve("cut.bin");
        assertThat(CliRun.of("make-model", "--dim", "64", "--hidden-dim", "128", "--layers", "1", "--heads", "4",
                "--kv-heads", "4", "--vocab", "600", "--seq-len", "64", m.toString()).code()).isZero();
        long whole = Files.size(m);
        try (var ch = java.nio.channels.FileChannel.open(m, java.nio.file.StandardOpenOption.WRITE)) {
            ch.truncate(30_000);
        }
        CliRun r = CliRun.of("generate", "--model", m.toString(), "--prompt", "hi");
        assertThat(r.code()).as(r.err()).isEqualTo(2);
        assertThat(r.err().strip()).startsWith("kvtier: --model: model file " + m + ": header says 1 layers")
                .endsWith("(expected " + String.format("%,d", whole) + " bytes, found 30,000)")
                .doesNotContain("tokenizer").doesNotContain("\n");
    }

    /** Writes NaN over the file's last float: the size stays right, the load refuses the weights. */
    private static void poisonLastWeight(Path m) throws IOException {
        try (var ch = java.nio.channels.FileChannel.open(m, java.nio.file.StandardOpenOption.WRITE)) {
            java.nio.ByteBuffer nan = java.nio.ByteBuffer.allocate(4).order(java.nio.ByteOrder.LITTLE_ENDIAN).putFloat(Float.NaN).flip();
            ch.write(nan, Files.size(m) - 4);
        }
    }

    @Test
    void anEmptyModelFileSaysItIsEmpty() throws IOException {
        Path empty = Files.createFile(dir.resolve("empty.gguf"));
        assertOneLineError(CliRun.of("generate", "--model", empty.toString(), "--tokenizer",
                ReferenceRecords.tokenizer().toString(), "--prompt", "hi"),
                "--model: model file " + empty + ": is empty (0 bytes), expected a GGUF file or a llama2.c checkpoint");
    }

    @Test
    void aDirectoryOrAnEmptyPathAsTheModelSaysSoForEitherFormat() {
        String tok = ReferenceRecords.tokenizer().toString();
        assertOneLineError(CliRun.of("generate", "--model", dir.toString(), "--tokenizer", tok, "--prompt", "hi"),
                "--model: model file " + dir + ": is a directory, expected a GGUF file or a llama2.c checkpoint");
        assertOneLineError(CliRun.of("generate", "--model", "", "--tokenizer", tok, "--prompt", "hi"), "--model: model file: empty path");
        assertOneLineError(CliRun.of("replay", "--trace", ""), "--trace: empty path");
        String model = ReferenceRecords.model().toString();
        assertOneLineError(CliRun.of("generate", "--model", model, "--tokenizer", "", "--prompt", "hi"), "--tokenizer: tokenizer file: empty path");
        assertOneLineError(CliRun.of("generate", "--model", model, "--tokenizer", dir.toString(), "--prompt", "hi"),
                "--tokenizer: tokenizer file " + dir + ": is a directory, expected a llama2.c tokenizer file");
    }

    /**
     * A file of neither format or none at all is one line naming --model and the file, before any output, in every
     * command that loads a model (bench serve printed its header first and did not name the flag: a new user's trial).
     */
    @Test
    void aWrongModelFileNamesModelBeforeAnyOutputInEveryCommand() throws IOException {
        Path text = dir.resolve("passwd");
        Files.writeString(text, "root:x:0:0:root:/root:/bin/bash\n".repeat(8));
        Path none = dir.resolve("none.bin");
        String tok = ReferenceRecords.tokenizer().toString();
        String[][] commands = {{"generate", "--prompt", "hi", "--tokenizer", tok}, {"serve", "--port", "0", "--tokenizer", tok},
            {"bench", "generate", "--max-tokens", "2"}, {"bench", "serve", "--conversations", "1", "--turns", "1"},
            {"bench", "offload", "--skip-ttft", "--skip-bandwidth"}};
        for (String[] command : commands) {
            CliRun bad = CliRun.of(concat(command, "--model", text.toString()));
            assertThat(bad.code()).as(String.join(" ", command) + ": " + bad.err()).isEqualTo(2);
            assertThat(bad.err()).as(String.join(" ", command)).startsWith("kvtier: --model: model file " + text + ": ");
            assertThat(bad.err().strip()).as(String.join(" ", command)).doesNotContain("\n");
            assertThat(bad.out()).as(String.join(" ", command)).isEmpty();
            assertOneLineError(CliRun.of(concat(command, "--model", none.toString())), "--model " + none + ": no such file");
        }
    }

    /** A GGUF file with a damaged magic is said to be one, not judged as a llama2.c header alone (a new user's trial). */
    @Test
    void aDamagedGgufMagicIsNamed() throws IOException {
        byte[] gguf = Files.readAllBytes(ReferenceRecords.model().resolveSibling("gguf").resolve("stories260K.gguf"));
        gguf[3] = 'X';
        Path damaged = Files.write(dir.resolve("model.gguf"), gguf);
        assertOneLineError(CliRun.of("generate", "--model", damaged.toString(), "--prompt", "hi"), "--model: model file " + damaged
                + ": starts with 'GGUX', not the GGUF magic 'GGUF' (a damaged GGUF file?), and is no llama2.c checkpoint either");
        gguf[0] = 0;
        Path renamed = Files.write(dir.resolve("model.bin"), gguf);
        assertThat(CliRun.of("generate", "--model", renamed.toString(), "--prompt", "hi").err())
                .as("two bytes off and not named .gguf: judged as llama2.c").contains("not a llama2.c checkpoint");
    }

    /**
     * A NaN weight is refused in one line naming the file and the tensor, for either format (it generated token 0 for
     * ever): the stories260K GGUF through generate, a llama2.c checkpoint through bench generate.
     */
    @Test
    void aNaNWeightIsRefusedInOneLineNamingTheTensor() throws IOException {
        Path gguf = Files.copy(ReferenceRecords.model().resolveSibling("gguf").resolve("stories260K.gguf"), dir.resolve("nan.gguf"));
        long at;
        try (io.kvtier.model.gguf.GgufFile f = io.kvtier.model.gguf.GgufFile.open(gguf)) {
            at = f.dataOffset() + f.tensor("blk.2.attn_k.weight").offset() + 4L * 7;
        }
        nan(gguf, at);
        assertOneLineError(CliRun.of("generate", "--model", gguf.toString(), "--prompt", "hi"), "--model: GGUF file " + gguf
                + ": tensor blk.2.attn_k.weight holds NaN (first at element 7); the weights are damaged (every output would be NaN)");
        Path bin = Files.copy(ReferenceRecords.model(), dir.resolve("nan.bin"));
        nan(bin, Files.size(bin) - 4);
        CliRun r = CliRun.of("bench", "generate", "--model", bin.toString(), "--max-tokens", "2");
        assertThat(r.code()).as(r.err()).isEqualTo(2);
        assertThat(r.err()).startsWith("kvtier: --model: model file " + bin + ": tensor ").contains(" holds NaN (first at element ");
        assertThat(r.err().strip()).doesNotContain("\n");
    }

    private static void nan(Path file, long offset) throws IOException {
        try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(file, java.nio.file.StandardOpenOption.WRITE)) {
            ch.write(java.nio.ByteBuffer.wrap(new byte[] {0, 0, (byte) 0xc0, 0x7f}), offset);
        }
    }

    private static String[] concat(String[] a, String... b) {
        String[] all = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }

    /** Model and tokenizer files share one check (OffHeapFiles.requireNotDirectoryOrEmpty): the same words for an empty file. */
    @Test
    void anEmptyTokenizerFileSaysItIsEmptyLikeAModelFile() throws IOException {
        Path empty = Files.createFile(dir.resolve("empty-tokenizer.bin"));
        assertOneLineError(CliRun.of("generate", "--model", ReferenceRecords.model().toString(), "--tokenizer",
                empty.toString(), "--prompt", "hi"),
                "--tokenizer: tokenizer file " + empty + ": is empty (0 bytes), expected a llama2.c tokenizer file");
    }

    @Test
    void aNumberTooLargeForItsFlagNamesTheFlagAndTheRange() {
        assertOneLineError(CliRun.of("generate", "--max-tokens", "99999999999", "--prompt", "hi"),
                "--max-tokens: '99999999999' is too large: at most 2,147,483,647 tokens");
        assertOneLineError(CliRun.of("generate", "--max-tokens", "many", "--prompt", "hi"),
                "--max-tokens: 'many' is not a count of tokens (e.g. 4096, 4k, 4Ki, 1M)");
        assertOneLineError(CliRun.of("generate", "--threads", "many", "--prompt", "hi"),
                "--threads: 'many' is not a whole number up to " + Checks.mostThreads() + " (4 per core)"); // no count of tokens
    }

    /** A tier size beyond what a tier can count is refused with the size asked (it was silently cut to 44T). */
    @Test
    void aHostTierTooLargeToCountIsRefusedWithTheSizeAsked() {
        CliRun r = CliRun.of("generate", "--host-cache-bytes", "100T", "--prompt", "hi");
        assertThat(r.code()).as(r.err()).isEqualTo(2);
        assertThat(r.err().strip().lines()).hasSize(1);
        assertThat(r.err()).startsWith("kvtier: host tier of 109951162777600 bytes would be ")
                .contains("at most 2147483647 chunks");
    }
}

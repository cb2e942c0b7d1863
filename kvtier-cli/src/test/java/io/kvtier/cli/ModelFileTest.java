package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvtier.engine.ReferenceRecords;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Issue 14 item 6: a model file changed under a run does not touch it; make-model never clobbers silently. */
class ModelFileTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    @Test
    void aModelTruncatedAndOverwrittenUnderARunningProcessChangesNothing() throws Exception {
        Path model = Files.copy(ReferenceRecords.model(), dir.resolve("model.bin"));
        Path prompts = dir.resolve("p.txt");
        Files.write(prompts, Collections.nCopies(1000, "Once upon a time"));
        Path err = dir.resolve("err.txt");
        Process p = ChildCli.start(err, "generate", "--model", model.toString(), "--tokenizer",
                ReferenceRecords.tokenizer().toString(), "--prompts", prompts.toString(), "--sequential", "--max-tokens", "60",
                "--output", "jsonl", "--threads", "1");
        List<String> generated = new ArrayList<>();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String first = r.readLine();
            assertThat(first).as(ChildCli.stderr(err)).isNotNull();
            generated.add(JSON.readTree(first).get("generated_ids").toString());
            // What `cp other.bin model.bin` does: truncate, then write other bytes in place.
            try (FileChannel ch = FileChannel.open(model, StandardOpenOption.WRITE)) {
                ch.truncate(0);
                ch.write(ByteBuffer.wrap(new byte[4096]), 0);
            }
            for (int i = 0; i < 5; i++) {
                String line = r.readLine();
                assertThat(line).as("result %d after the change; stderr: %s", i + 2, ChildCli.stderr(err)).isNotNull();
                generated.add(JSON.readTree(line).get("generated_ids").toString());
            }
            p.destroy(); // SIGTERM
        }
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(ChildCli.stderr(err)).isEqualTo(143);
        assertThat(generated).as("greedy: every result equals the first").containsOnly(generated.getFirst());
        assertThat(ChildCli.stderr(err)).doesNotContain("SIGBUS", "fatal error");
    }

    /** A size past what a model file may hold is refused naming make-model's flag, not a header field. */
    @Test
    void aSizeTooLargeNamesTheFlag() {
        Path out = dir.resolve("big.bin");
        CliRun r = CliRun.of("make-model", out.toString(), "--layers", "100000");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).isEqualTo("kvtier: --layers must be at most 1024, got 100000\n");
        CliRun heads = CliRun.of("make-model", out.toString(), "--heads", "576");
        assertThat(heads.err()).isEqualTo("kvtier: --heads 576 must divide --dim 288 into an even head size\n");
        assertThat(out).doesNotExist();
    }

    @Test
    void makeModelRefusesAVocabularyNoTokenizerCanHave() throws Exception {
        Path out = dir.resolve("v.bin");
        CliRun r = CliRun.of("make-model", out.toString(), "--vocab", "258");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).isEqualTo("kvtier: --vocab must be at least 259 (3 special tokens and the 256 byte tokens of a"
                + " llama2.c tokenizer), got 258\n");
        assertThat(out).doesNotExist();
        try (var files = Files.list(dir)) {
            assertThat(files.toList()).as("nothing written").isEmpty();
        }
    }

    @Test
    void makeModelRefusesToReplaceAFileWithoutForce() throws Exception {
        Path out = dir.resolve("m.bin");
        String[] shape = {"--dim", "16", "--hidden-dim", "32", "--layers", "1", "--heads", "2", "--kv-heads", "2",
            "--vocab", "259", "--seq-len", "8"};
        CliRun first = CliRun.of(concat(new String[] {"make-model", out.toString(), "--seed", "1"}, shape));
        assertThat(first.code()).as(first.err()).isZero();
        byte[] original = Files.readAllBytes(out);

        CliRun refused = CliRun.of(concat(new String[] {"make-model", out.toString(), "--seed", "2"}, shape));
        assertThat(refused.code()).isEqualTo(2);
        assertThat(refused.err()).isEqualTo("kvtier: make-model " + out + ": the file exists; give --force to replace it\n");
        assertThat(Files.readAllBytes(out)).isEqualTo(original);

        CliRun forced = CliRun.of(concat(new String[] {"make-model", out.toString(), "--seed", "2", "--force"}, shape));
        assertThat(forced.code()).as(forced.err()).isZero();
        assertThat(Files.readAllBytes(out)).hasSameSizeAs(original).isNotEqualTo(original);
        try (var files = Files.list(dir)) {
            assertThat(files.map(f -> f.getFileName().toString()).toList()).as("no temporary file left").containsExactly("m.bin");
        }
    }

    /** A trial's full disk read "has 0.0 GB free": the unit follows the size. */
    @Test
    void freeSpaceIsPrintedInAUnitThatShowsIt() {
        assertThat(MakeModelCommand.size(102_400)).isEqualTo("102.4 kB");
        assertThat(MakeModelCommand.size(61_683_552)).isEqualTo("61.7 MB");
        assertThat(MakeModelCommand.size(20_400_000_000L)).isEqualTo("20.4 GB");
    }

    @Test
    void makeModelRefusesAModelLargerThanTheFreeSpaceBeforeWritingAByte() throws Exception {
        Path out = dir.resolve("huge.bin");
        CliRun r = CliRun.of("make-model", out.toString(), "--dim", "60000", "--hidden-dim", "200000", "--layers", "100");
        assertThat(r.code()).as(r.err()).isEqualTo(2);
        assertThat(r.err()).startsWith("kvtier: make-model " + out + ": the model needs 20")
                .contains(" GB and " + dir.toAbsolutePath() + " has ").endsWith(" free\n");
        try (var files = Files.list(dir)) {
            assertThat(files.toList()).as("nothing written").isEmpty();
        }
    }

    @Test
    void aSignalDuringMakeModelLeavesNoTemporaryFile() throws Exception {
        Path out = dir.resolve("big.bin");
        Process p = ChildCli.start(dir.resolve("err.txt"), "make-model", out.toString(), "--dim", "4096", "--hidden-dim",
                "11008", "--layers", "4", "--heads", "32", "--kv-heads", "32");
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (tmpFiles().isEmpty() || Files.size(tmpFiles().getFirst()) < (1 << 20)) {
            assertThat(p.isAlive()).as("still writing when the signal comes").isTrue();
            assertThat(System.nanoTime()).as("the temporary file appears").isLessThan(deadline);
            Thread.sleep(20);
        }
        p.destroy(); // SIGTERM
        assertThat(p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        assertThat(tmpFiles()).as("temporary file removed").isEmpty();
        assertThat(out).doesNotExist();
    }

    private List<Path> tmpFiles() throws java.io.IOException {
        try (var files = Files.list(dir)) {
            return files.filter(f -> f.getFileName().toString().startsWith(".big.bin.tmp-")).toList();
        }
    }

    @Test
    void aWriteErrorSaysWhatFailedAndWhy() {
        var full = new java.io.UncheckedIOException("cannot write checkpoint /x/m.bin", new java.io.IOException("No space left on device"));
        assertThat(Main.describe(full)).isEqualTo("cannot write checkpoint /x/m.bin: No space left on device");
        var bare = new java.io.UncheckedIOException(new java.io.IOException("Stale file handle"));
        assertThat(Main.describe(bare)).isEqualTo("IOException: Stale file handle");
    }

    private static String[] concat(String[] a, String[] b) {
        String[] c = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }
}

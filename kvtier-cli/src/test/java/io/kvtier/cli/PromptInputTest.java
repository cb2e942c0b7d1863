package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.engine.ReferenceRecords;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Issue 14 items 4 and 8: prompt files that would be changed silently or cost minutes are refused at once, with where. */
class PromptInputTest {

    @TempDir
    Path dir;

    private CliRun generate(String... extra) {
        List<String> args = new ArrayList<>(List.of("generate", "--model", ReferenceRecords.model().toString(),
                "--tokenizer", ReferenceRecords.tokenizer().toString(), "--max-tokens", "4", "--output", "jsonl"));
        args.addAll(List.of(extra));
        return CliRun.of(args.toArray(String[]::new));
    }

    private static void assertOneLineError(CliRun r, String... fragments) {
        assertThat(r.code()).as(r.err()).isEqualTo(2);
        assertThat(r.err().strip().lines().toList()).as(r.err()).hasSize(1);
        assertThat(r.err()).startsWith("kvtier: ").contains(fragments).doesNotContain("Exception", "\tat ");
        assertThat(r.out()).isEmpty();
    }

    @Test
    void invalidUtf8NamesTheFileTheLineAndTheByte() throws IOException {
        Path f = dir.resolve("bad.txt");
        byte[] bytes = "Once upon a time\nTom and \u00e9\nthe big".getBytes(StandardCharsets.UTF_8);
        byte[] broken = new byte[bytes.length + 1];
        System.arraycopy(bytes, 0, broken, 0, bytes.length);
        broken[bytes.length] = (byte) 0xC3; // a lead byte with nothing after it, on line 3
        broken[bytes.length - 3] = (byte) 0xFF; // and a byte that is never UTF-8, earlier on line 3
        Files.write(f, broken);
        assertOneLineError(generate("--prompts", f.toString()), "--prompts " + f, "line 3 is not valid UTF-8",
                "byte 0xFF at byte 5 of the line");
    }

    @Test
    void nulNamesTheLine() throws IOException {
        Path f = dir.resolve("nul.txt");
        Files.writeString(f, "Once upon a time\nTom\0 and Sue\n");
        assertOneLineError(generate("--prompts", f.toString()), "--prompts " + f, "line 2 has a NUL character at column 4");
    }

    @Test
    void aPromptArgumentThatWasNotUtf8IsRefusedLikeAFileLine() {
        // The JVM hands kvtier U+FFFD where the shell passed bytes that are not UTF-8 ($'\\xff\\xfe bad').
        assertOneLineError(generate("--prompt", "Once", "--prompt", "\uFFFD\uFFFD bad"),
                "--prompt: the text is not valid UTF-8", "at character 1 with U+FFFD", "--prompts file");
    }

    @Test
    void nulInAPromptArgumentIsRefusedToo() {
        assertOneLineError(generate("--prompt", "Once\0upon"), "prompt 1", "NUL character");
    }

    @Test
    void aByteOrderMarkIsNotPartOfTheFirstPrompt() throws IOException {
        Path withBom = dir.resolve("bom.txt");
        Files.write(withBom, concat(new byte[] {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF}, "Once upon a time\n".getBytes(StandardCharsets.UTF_8)));
        Path without = dir.resolve("plain.txt");
        Files.writeString(without, "Once upon a time\n");
        CliRun a = generate("--prompts", withBom.toString());
        CliRun b = generate("--prompts", without.toString());
        assertThat(a.code()).as(a.err()).isZero();
        assertThat(a.out()).isEqualTo(b.out()).contains("\"prompt\":\"Once upon a time\"").contains("\"prompt_ids\":[1,403,");
    }

    @Test
    void crlfLinesAreOnePromptEach() throws IOException {
        Path f = dir.resolve("crlf.txt");
        Files.writeString(f, "Once upon a time\r\nTom and Sue\r\n");
        CliRun r = generate("--prompts", f.toString());
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out().lines()).hasSize(2).noneMatch(l -> l.contains("\\r"));
    }

    /** 100 KB used to be tokenized for 4 minutes before it was found too long; the byte length alone settles it. */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aPromptTooLongForTheContextIsRefusedByItsLength() throws IOException {
        Path f = dir.resolve("long.txt");
        Files.writeString(f, "Once upon a time there was a dog. ".repeat(3_000) + "\n");
        assertOneLineError(generate("--prompts", f.toString()), "prompt 1 has 102000 bytes, at least",
                "tokens, more than the model's context of 512 tokens; shorten it (--prompts line 1)");
    }

    @Test
    void absurdThreadCountsAreRefused() {
        assertOneLineError(generate("--prompt", "hi", "--threads", "1000"), "--threads must be at most", "4 per core",
                "got 1000");
        assertOneLineError(generate("--prompt", "hi", "--threads", "-1"), "--threads must be at least 1");
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] c = new byte[a.length + b.length];
        System.arraycopy(a, 0, c, 0, a.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }

    /**
     * An empty prompt on a model without BOS (qwen2) has no token: one true line naming the reason
     * and the flag, exit 2 (it once said "a prompt has at least BOS"); on stories260K, which has
     * BOS, the default empty prompt still runs as BOS alone.
     */
    @Test
    void anEmptyPromptOnAModelWithoutBosSaysSoAndNamesTheFlag() {
        Path qwen2 = ReferenceRecords.shared().resolve("models/gguf-ref/qwen2-bpe-q8_0.gguf");
        CliRun r = CliRun.of("generate", "--model", qwen2.toString(), "--max-tokens", "3");
        assertOneLineError(r, "prompt 1 is empty and this model adds no BOS token", "--prompt TEXT");
        CliRun bos = generate();
        assertThat(bos.code()).as(bos.err()).isZero();
        assertThat(bos.out()).contains("\"prompt_ids\":[1]");
    }

    /** A blank line of a prompt file on a model without BOS is named by its line (it named the flags only). */
    @Test
    void aBlankPromptLineOnAModelWithoutBosIsNamed() throws IOException {
        Path qwen2 = ReferenceRecords.shared().resolve("models/gguf-ref/qwen2-bpe-q8_0.gguf");
        Path f = dir.resolve("blank.txt");
        Files.writeString(f, "Hello\n\nWorld\n");
        assertOneLineError(CliRun.of("generate", "--model", qwen2.toString(), "--max-tokens", "3", "--prompts", f.toString()),
                "prompt 2 is empty and this model adds no BOS token", "give --prompts line 2 some text, or remove the line");
    }

    /** {@code --cache-salt ""} would silently share the unsalted blocks: refused, as vLLM refuses an empty cache_salt. */
    @Test
    void anEmptyCacheSaltIsRefused() {
        assertOneLineError(generate("--prompt", "Once", "--cache-salt", ""), "--cache-salt must be a non-empty string");
    }
}

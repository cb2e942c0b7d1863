package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.engine.ReferenceRecords;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A request that can never run is one line naming the flags that change it, with values that fit
 * (as replay's "give --max-tokens N or less" and serve's "send max_tokens N or less"): the engine's
 * wording once read "5 prompt tokens with max tokens 400 need up to 404 token positions = 26 blocks
 * of 16, ...; raise --device-blocks or --block-size, or lower --max-tokens".
 */
class RequestFitLinesTest {

    @TempDir
    Path dir;

    private static CliRun generate(String... extra) {
        List<String> args = new ArrayList<>(List.of("generate", "--model", ReferenceRecords.model().toString(),
                "--tokenizer", ReferenceRecords.tokenizer().toString(), "--output", "jsonl"));
        args.addAll(List.of(extra));
        return CliRun.of(args.toArray(String[]::new));
    }

    private static void assertOneLineExit2(CliRun r, String line) {
        assertThat(r.code()).as(r.err()).isEqualTo(2);
        assertThat(r.err().strip().lines().toList()).as(r.err()).containsExactly(line);
        assertThat(r.out()).isEmpty();
    }

    @Test
    void aRequestBeyondThePoolNamesMaxTokensAndDeviceBlocksWithValuesThatFit() {
        // "Once upon a time" is 5 tokens (BOS first); 4 blocks of 16 hold 64 positions: 60 new tokens.
        assertOneLineExit2(generate("--prompt", "Once upon a time", "--device-blocks", "4", "--max-tokens", "400"),
                "kvtier: prompt 1: 5 prompt tokens and up to 400 new ones (--max-tokens) need 404 token positions, 26 blocks of 16,"
                        + " but the device pool has 4 (--device-blocks); give --max-tokens 60 or less, or --device-blocks 26 or more");
        assertThat(generate("--prompt", "Once upon a time", "--device-blocks", "4", "--max-tokens", "61").code()).isEqualTo(2);
        CliRun fits = generate("--prompt", "Once upon a time", "--device-blocks", "4", "--max-tokens", "60");
        assertThat(fits.code()).as(fits.err()).isZero();
    }

    /** Was: the advice fitted the first prompt checked, and the next run refused the next one (trial29). */
    @Test
    void withSeveralPromptsTheAdviceFitsEveryPrompt() {
        // "Hi" is 2 tokens, "Once upon a time" 5: with 3 blocks of 16 (48 positions) the longer fits 44 new tokens.
        String line = "kvtier: prompt 2: 5 prompt tokens and up to 60 new ones (--max-tokens) need 64 token positions, 4 blocks of 16,"
                + " but the device pool has 3 (--device-blocks); give --max-tokens 44 or less, or --device-blocks 4 or more";
        assertOneLineExit2(generate("--prompt", "Hi", "--prompt", "Once upon a time", "--device-blocks", "3", "--max-tokens", "60"), line);
        assertOneLineExit2(generate("--prompt", "Once upon a time", "--prompt", "Hi", "--device-blocks", "3", "--max-tokens", "60"),
                line.replace("prompt 2:", "prompt 1:"));
        CliRun fits = generate("--prompt", "Hi", "--prompt", "Once upon a time", "--device-blocks", "3", "--max-tokens", "44", "--sequential");
        assertThat(fits.code()).as(fits.err()).isZero();
    }

    /** The default pool holds each prompt's KV slots, not one more: 5 + 44 tokens write 48 (trial29: it reserved 4 blocks). */
    @Test
    void theDefaultPoolHoldsTheKvSlotsARequestCanWrite() {
        CliRun r = generate("--prompt", "Once upon a time", "--max-tokens", "44");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.err()).contains("device blocks 0 free + 3 cached of 3");
    }

    /** Short enough in bytes to be tokenized, too long in tokens: the line says where the prompt came from. */
    @Test
    void aPromptBeyondTheContextNamesItsSource() throws IOException {
        Path f = dir.resolve("prompts.txt");
        Files.writeString(f, "Tom and Sue\n" + "Once upon a time there was a dog. ".repeat(60) + "\n");
        CliRun r = generate("--prompt", "hi", "--prompts", f.toString(), "--max-tokens", "4");
        assertThat(r.code()).as(r.err()).isEqualTo(2);
        assertThat(r.err().strip().lines().toList()).as(r.err()).singleElement().asString()
                .matches("kvtier: prompt 3 has \\d+ tokens, more than the model's context of 512 tokens; shorten it \\(--prompts line 2\\)");
        CliRun arg = generate("--prompt", "Once upon a time there was a dog. ".repeat(60), "--max-tokens", "4");
        assertThat(arg.err().strip()).as(arg.err())
                .matches("kvtier: prompt 1 has \\d+ tokens, more than the model's context of 512 tokens; shorten it \\(--prompt\\)");
    }
}

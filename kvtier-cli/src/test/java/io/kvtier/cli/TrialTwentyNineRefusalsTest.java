package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A new user's trial 29: flag refusals that named a bound the flag does not have (its type's, or
 * none), and values taken that should be refused. Each is one line, exit 2, nothing written.
 */
class TrialTwentyNineRefusalsTest {

    private static final String VOCAB_LEAST = "(3 special tokens and the 256 byte tokens of a llama2.c tokenizer)";

    @TempDir
    Path dir;

    private static void assertOneLineError(CliRun r, String expected) {
        GgufCliErrorsTest.assertOneLineError(r, expected);
    }

    private CliRun makeModel(String... flags) {
        String[] args = new String[2 + flags.length];
        args[0] = "make-model";
        args[1] = dir.resolve("m.bin").toString();
        System.arraycopy(flags, 0, args, 2, flags.length);
        return CliRun.of(args);
    }

    /** It said "at most 2,147,483,647 tokens" past an int, and "must be at most 4194304" below: one most, the flag's. */
    @Test
    void aTokenCountPastAnIntNamesTheFlagsOwnMost() {
        assertOneLineError(makeModel("--seq-len", "2147483648"), "--seq-len must be at most 4194304, got 2147483648");
        assertOneLineError(makeModel("--seq-len", "3G"), "--seq-len must be at most 4194304, got 3G");
        assertOneLineError(makeModel("--seq-len", "2147483647"), "--seq-len must be at most 4194304, got 2147483647");
        assertThat(dir.resolve("m.bin")).doesNotExist();
    }

    /** --heads said "up to 65536" (288 heads of --dim 288 are refused: 144 is the most), --kv-heads "up to 2147483647". */
    @Test
    void headsStateTheirRuleAndTheVocabularyItsLeast() {
        assertOneLineError(makeModel("--heads", "x"), "--heads: 'x' is not a whole number that divides --dim into an even head size");
        assertOneLineError(makeModel("--kv-heads", "1.5"), "--kv-heads: '1.5' is not a whole number that divides --heads");
        assertOneLineError(makeModel("--heads", "288"), "--heads 288 must divide --dim 288 into an even head size");
        assertOneLineError(makeModel("--vocab", "x"), "--vocab: 'x' is not a whole number from 259 to 4194304");
        assertOneLineError(makeModel("--vocab", "0"), "--vocab must be at least 259 " + VOCAB_LEAST + ", got 0");
        assertOneLineError(makeModel("--vocab", "-5"), "--vocab must be at least 259 " + VOCAB_LEAST + ", got -5");
        assertOneLineError(makeModel("--vocab", "4194305"), "--vocab must be at most 4194304, got 4194305");
        assertThat(dir.resolve("m.bin")).doesNotExist();
    }

    /** The stated most, 2147483647, failed sizing the bench's arrays ("not enough memory", exit 2). */
    @Test
    void benchOffloadRepeatsHaveAMost() {
        assertOneLineError(CliRun.of("bench", "offload", "--repeats", "2147483647"), "--repeats must be at most 1000 (each repeat "
                + "runs every TTFT and decode figure again, seconds each), got 2147483647");
        assertOneLineError(CliRun.of("bench", "offload", "--repeats", "x"), "--repeats: 'x' is not a whole number up to 1000");
    }

    /** A time past a long's ticks said "is too long a time", naming no range; it is the one form of every time flag. */
    @Test
    void aTimeTooLongToCountIsTheOneRangeLine() throws Exception {
        assertOneLineError(CliRun.of("serve", "--shutdown-grace", "99999999999999999999"),
                "--shutdown-grace must be between 0s and 86400s (1 day), got 99999999999999999999s");
        assertOneLineError(CliRun.of("serve", "--shutdown-grace", "-99999999999999999999"),
                "--shutdown-grace must be between 0s and 86400s (1 day), got -99999999999999999999s");
        assertOneLineError(CliRun.of("generate", "--prompt", "hi", "--remote-url=redis://127.0.0.1:1", "--remote-timeout",
                "99999999999999999999"), "--remote-timeout must be between 1ms and 86400s (1 day), got 99999999999999999999ms");
        assertOneLineError(CliRun.of("bench", "offload", "--seconds-per-size", "99999999999999999999s"),
                "--seconds-per-size must be between 1ms and 3600s (1 hour), got 99999999999999999999s");
        assertOneLineError(TraceFiles.replayTwoRequests(dir, "--weight-read-ms", "99999999999999999999"),
                "--weight-read-ms must be between 0s and 86400s (1 day), got 99999999999999999999ms");
    }

    /** {@code --port +80} and {@code --threads +2} were taken where sizes refuse {@code +1M}. */
    @Test
    void aWholeNumberWithAPlusIsRefused() {
        assertOneLineError(CliRun.of("serve", "--port", "+80"), "--port: '+80' is not a whole number up to 65535");
        assertOneLineError(CliRun.of("bench", "generate", "--threads", "+2"), "--threads: '+2' is not a whole number up to "
                + Checks.mostThreads() + " (4 per core)");
        assertOneLineError(makeModel("--dim", "+64"), "--dim: '+64' is not a whole number up to 65536");
        assertOneLineError(CliRun.of("generate", "--prompt", "hi", "--seed", "+1"),
                "--seed: '+1' is not a whole number up to 9223372036854775807");
        assertOneLineError(CliRun.of("serve", "--port", "99999999999"), "--port: '99999999999' is not a whole number up to 65535");
    }
}

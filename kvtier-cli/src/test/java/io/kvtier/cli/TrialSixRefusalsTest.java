package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.engine.ReferenceRecords;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A new user's trial 6: refusals worded one way whatever the command or the case, one line and
 * exit 2 with nothing printed above it.
 */
class TrialSixRefusalsTest {

    @TempDir
    Path dir;

    private static void assertOneLineError(CliRun r, String expected) {
        GgufCliErrorsTest.assertOneLineError(r, expected);
    }

    /** trial33: a directory under a regular file was refused by the tier, without the flag's name. */
    @Test
    void aDiskCacheDirUnderAFileNamesTheFlag() throws java.io.IOException {
        Path file = java.nio.file.Files.writeString(dir.resolve("afile"), "in the way");
        Path under = file.resolve("sub").resolve("kv");
        assertOneLineError(CliRun.of("generate", "--prompt", "hi", "--disk-cache-dir", under.toString()),
                "--disk-cache-dir " + under + ": cannot be created: " + file + " is not a directory");
    }

    /**
     * A host tier too small for one chunk names the flag and the least budget, in the words of
     * the several-KV-groups case (Gemma3TierBudgetTest): stories260K's chunk of one 16-token
     * block is a 20480-byte payload behind its header, a 20672-byte host slot and a 24576-byte
     * disk file (4 KiB allocation units).
     */
    @Test
    void aTierTooSmallForOneChunkNamesTheFlagAndTheLeastBudget() {
        assertOneLineError(CliRun.of("generate", "--prompt", "hi", "--host-cache-bytes", "1"),
                "--host-cache-bytes 1 cannot hold one chunk of 20672 bytes: give at least 20672");
        assertOneLineError(CliRun.of("generate", "--prompt", "hi", "--host-cache-bytes", "20671"),
                "--host-cache-bytes 20671 cannot hold one chunk of 20672 bytes: give at least 20672");
        assertOneLineError(CliRun.of("generate", "--prompt", "hi", "--host-cache-bytes", "1M", "--disk-cache-dir",
                dir.resolve("kv").toString(), "--disk-cache-bytes", "1"),
                "--disk-cache-bytes 1 cannot hold one chunk of 24576 bytes: give at least 24576");
    }

    /**
     * A new user's trial: a remote write budget below one chunk's value (stories260K: a 192-byte
     * header and a 20480-byte payload) dropped every store and said so only in the summary's count.
     * Refused before the store is reached (nothing listens at the URL's port).
     */
    @Test
    void aRemoteWriteBudgetBelowOneChunksValueIsRefused() {
        assertOneLineError(CliRun.of("generate", "--prompt", "hi", "--remote-url", "redis://127.0.0.1:1",
                "--remote-max-in-flight", "20671"), "--remote-max-in-flight 20671 cannot hold one chunk's value of 20672 bytes "
                + "(header and payload), so every write to the remote tier would be dropped: give at least 20672");
    }

    /** Trial 6: bench serve printed its header, then refused the host tier. */
    @Test
    void benchServeRefusesATooSmallHostTierBeforeItsHeader() {
        assertOneLineError(CliRun.of("bench", "serve", "--conversations", "1", "--turns", "1", "--host-cache-bytes", "1"),
                "--host-cache-bytes 1 cannot hold one chunk of 20672 bytes: give at least 20672");
    }

    /** A number is echoed as typed ({@code 0}, not Java's {@code 0.0}) by every flag that takes a fraction. */
    @Test
    void aWrongNumberIsEchoedAsTyped() throws java.io.IOException {
        assertOneLineError(CliRun.of("bench", "offload", "--seconds-per-size", "0"),
                "--seconds-per-size must be between 1ms and 3600s (1 hour), got 0s");
        assertOneLineError(CliRun.of("bench", "offload", "--seconds-per-size", "-2.50"),
                "--seconds-per-size must be between 1ms and 3600s (1 hour), got -2.50s");
        assertOneLineError(CliRun.of("generate", "--prompt", "hi", "--temperature", "-1"),
                "--temperature must be in [0, 2], got -1");
        assertOneLineError(CliRun.of("generate", "--prompt", "hi", "--temperature", "1e9"), "--temperature must be in [0, 2], got 1000000000");
        assertOneLineError(CliRun.of("generate", "--prompt", "hi", "--top-p", "1.1"), "--top-p must be in (0, 1], got 1.1");
        // trial21: a value that is 0 as a float was refused as "got 0".
        assertOneLineError(CliRun.of("generate", "--prompt", "hi", "--top-p", "1e-46"), "--top-p must be in (0, 1], got 1E-46");
        assertOneLineError(CliRun.of("serve", "--shutdown-grace", "-1"), "--shutdown-grace must be between 0s and 86400s (1 day), got -1s");
        assertOneLineError(CliRun.of("generate", "--prompt", "hi", "--host-cache-bytes", "1M", "--disk-cache-dir",
                dir.resolve("kv").toString(), "--disk-scan-wait", "-1"), "--disk-scan-wait must be between 0s and 86400s (1 day), got -1s");
        assertOneLineError(CliRun.of("generate", "--prompt", "hi", "--host-cache-bytes", "1M", "--remote-url",
                "redis://127.0.0.1:1", "--remote-ttl", "-1"), "--remote-ttl must be 0 (no expiry) or between 2s and 31536000s (365 days), got -1s");
        Path trace = java.nio.file.Files.writeString(dir.resolve("t.jsonl"), "{\"timestamp\": 0, \"input_length\": 4, "
                + "\"output_length\": 1, \"hash_ids\": [1]}\n");
        assertOneLineError(CliRun.of("replay", "--trace", trace.toString(), "--mode", "timed", "--speedup", "0"),
                "--speedup must be a positive number, got 0");
    }

    @Test
    void numbersAreShownAsTyped() {
        assertThat(Checks.shown(0.0)).isEqualTo("0");
        assertThat(Checks.shown(-0.0)).isEqualTo("0");
        assertThat(Checks.shown(-1.0)).isEqualTo("-1");
        assertThat(Checks.shown(0.1f)).isEqualTo("0.1");
        assertThat(Checks.shown(1e10)).isEqualTo("10000000000");
        assertThat(Checks.shown(1e9f)).isEqualTo("1000000000");
        assertThat(Checks.shown(1e99)).isEqualTo("1E+99");
        assertThat(Checks.shown(Double.NaN)).isEqualTo("NaN");
        assertThat(Checks.shown(Double.NEGATIVE_INFINITY)).isEqualTo("-Infinity");
    }

    /**
     * A missing tokenizer was "tokenizer file X: not found", a missing password file "cannot read it
     * (X)", a missing model "--model X: no such file": now all in the model's words.
     */
    @Test
    void aMissingTokenizerIsWordedAsAMissingModel() {
        Path none = dir.resolve("none.bin");
        String model = ReferenceRecords.model().toString();
        assertOneLineError(CliRun.of("generate", "--model", model, "--tokenizer", none.toString(), "--prompt", "hi"),
                "--tokenizer " + none + ": no such file");
        assertOneLineError(CliRun.of("serve", "--port", "0", "--model", model, "--tokenizer", none.toString()),
                "--tokenizer " + none + ": no such file");
        assertOneLineError(CliRun.of("generate", "--model", none.toString(), "--prompt", "hi"), "--model " + none + ": no such file");
        assertOneLineError(CliRun.of("replay", "--trace", none.toString()), "--trace " + none + ": no such file");
        assertOneLineError(CliRun.of("generate", "--prompt", "hi", "--host-cache-bytes", "1M", "--remote-url", "redis://127.0.0.1:1",
                "--remote-password-file", none.toString()), "--remote-password-file " + none + ": no such file");
    }
}

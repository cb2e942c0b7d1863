package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A new user's trial 27, the offloading side: flag values that were an internal error (a stack
 * trace, exit 1) or that silently meant something else are one line and exit 2, nothing printed
 * above it. Nothing listens at port 1, and every refusal comes before the store is reached.
 */
class TrialTwentySevenRefusalsTest {

    @TempDir
    Path dir;

    private static void assertOneLineError(CliRun r, String expected) {
        GgufCliErrorsTest.assertOneLineError(r, expected);
    }

    private static CliRun generateWithRemote(String... flags) {
        String[] args = new String[6 + flags.length];
        System.arraycopy(new String[] {"generate", "--prompt", "hi", "--max-tokens", "1", "--remote-url=redis://127.0.0.1:1"}, 0,
                args, 0, 6);
        System.arraycopy(flags, 0, args, 6, flags.length);
        return CliRun.of(args);
    }

    /** Lettuce's connect timeout is an int of ms: 2147483648 was an ArithmeticException from inside the client. */
    @Test
    void aRemoteTimeoutBeyondADayIsRefused() {
        assertOneLineError(generateWithRemote("--remote-timeout", "2147483648"),
                "--remote-timeout must be between 1ms and 86400s (1 day), got 2147483648ms");
        assertOneLineError(generateWithRemote("--remote-timeout", "99999999999"),
                "--remote-timeout must be between 1ms and 86400s (1 day), got 99999999999ms");
    }

    /** The breaker's period is kept in ns: Long.MAX_VALUE ms overflowed Duration.toNanos at the store's start. */
    @Test
    void aBreakerPeriodBeyondADayIsRefused() {
        assertOneLineError(generateWithRemote("--remote-breaker-open", "9223372036854775807"),
                "--remote-breaker-open must be between 0s and 86400s (1 day), got 9223372036854775807ms");
    }

    /** The expiry is sent in whole ms: 0.0001 s became 0 ms, which the store takes as no expiry at all. */
    @Test
    void aRemoteTtlBelowOneMillisecondIsRefusedNotTurnedIntoNoExpiry() {
        assertOneLineError(generateWithRemote("--remote-ttl", "0.0001"),
                "--remote-ttl: '0.0001' is 0.1 ms, not a whole number of milliseconds");
    }

    /** A step too long for the simulator's clock was an ArithmeticException's stack trace, exit 1. */
    @Test
    void aCostTooLargeForTheSimulatedClockIsOneLine() throws IOException {
        String clock = "the simulated time passed the simulator's clock (2^63 ns, about 292 years): the cost model's figures "
                + "are too large for this trace";
        assertOneLineError(TraceFiles.replayTwoRequests(dir, "--linear-us-per-token", "1e30"),
                clock + " (--linear-us-per-token 1E+30)");
        // 9e18 ns a step passed 2^63 ns in the two requests' steps; a cost-model time is now at most a day (trial 29).
        assertOneLineError(TraceFiles.replayTwoRequests(dir, "--mode", "timed", "--step-overhead-ms", "9000000000000"),
                "--step-overhead-ms must be between 0s and 86400s (1 day), got 9000000000000ms");
        // The remote lane's write wrapped around and ended at once: its hits were served instantly.
        assertOneLineError(TraceFiles.replayTwoRequests(dir, "--mode", "timed", "--remote-cache-tokens", "1M",
                "--remote-gbps", "1e-300"), clock + " (--remote-gbps 1E-300)");
    }

    /** A 1 MB/s host link (one 512-token block of 128 KiB a token takes 67 s) showed its store lane busy 124,753%. */
    @Test
    void aSlowHostLinkIsBusyAtMostTheWholeMakespan() throws IOException {
        Path json = dir.resolve("r.json");
        CliRun r = TraceFiles.replayTwoRequests(dir, "--mode", "timed", "--host-gbps", "0.001", "--stats-json", json.toString());
        assertThat(r.code()).as(r.err()).isZero();
        var t = new ObjectMapper().readTree(json.toFile());
        // the first store starts at request 0's first step and runs past request 1's arrival at 100 s and the run's end
        assertThat(t.get("pcie_store_busy").asDouble()).isGreaterThan(0.99).isLessThanOrEqualTo(1.0);
    }

    /** A host or disk tier of fewer tokens than a block was no tier at all, silently; a remote one was rounded up. */
    @Test
    void anOffloadTierOfLessThanOneBlockIsRefused() throws IOException {
        assertOneLineError(TraceFiles.replayTwoRequests(dir, "--host-cache-tokens", "100"),
                "--host-cache-tokens: '100' is less than one block (512 tokens): give at least 512, or 0 for no such tier");
        assertOneLineError(TraceFiles.replayTwoRequests(dir, "--disk-cache-tokens", "511"),
                "--disk-cache-tokens: '511' is less than one block (512 tokens): give at least 512, or 0 for no such tier");
        assertOneLineError(TraceFiles.replayTwoRequests(dir, "--remote-cache-tokens", "0.1k"),
                "--remote-cache-tokens: '0.1k' is less than one block (512 tokens): give at least 512, or 0 for no such tier");
    }

    /** An hour a size at most (1e308 overflowed Duration.toNanos after the host table's header; the time grammar now refuses it). */
    @Test
    void aBandwidthTimeBeyondAnHourIsRefused() {
        assertOneLineError(CliRun.of("bench", "offload", "--skip-ttft", "--skip-decode", "--seconds-per-size", "99999"),
                "--seconds-per-size must be between 1ms and 3600s (1 hour), got 99999s");
    }

    /** The prompt was cut to the TTFT model's context silently: --prompt-tokens 5000 measured a 1023-token prompt. */
    @Test
    void aTtftPromptLongerThanTheModelsContextIsRefused() {
        assertOneLineError(CliRun.of("bench", "offload", "--skip-bandwidth", "--skip-decode", "--prompt-tokens", "5000"),
                "--prompt-tokens 5000 does not fit the TTFT model's context of 1024 tokens: give at most 1023 (the prompt and "
                        + "the token its last position samples)");
        // 2, the least it took, left no block to store: an internal error after the TTFT header.
        assertOneLineError(CliRun.of("bench", "offload", "--skip-bandwidth", "--skip-decode", "--prompt-tokens", "16"),
                "--prompt-tokens must be at least 17 (a block of 16 tokens for the tiers to hold, and a token to compute), got 16");
    }

    /**
     * On a 2 MiB filesystem the disk bandwidth figure failed after the host table, and the TTFT figures as an internal
     * error ("did not hit both tiers"); a --disk-mib-per-size typo wrote until the disk was full. The largest of the
     * default run's sizes is 16 KiB: 8,192 files a side of 16,384 + 256 header bytes, 20,480 in 4 KiB units, twice; the
     * TTFT prefix is 62 blocks of the 110M shape's 1,179,648 bytes, each file 1,183,744 in 4 KiB units.
     */
    @Test
    void figuresWithoutRoomOnTheirFilesystemAreRefusedBeforeTheFirst() {
        var usable = DiskOptions.usableSpace;
        DiskOptions.usableSpace = p -> 2L << 20;
        try {
            String d = dir.toString();
            assertOneLineError(CliRun.of("bench", "offload", "--skip-ttft", "--skip-decode", "--disk-cache-dir", d),
                    "bench offload: the disk figures hold up to 320.0 MiB of files at once (both sides of one chunk size, "
                            + "--disk-mib-per-size 128), and the filesystem of --disk-cache-dir " + d + " has 2.0 MiB free: give a "
                            + "smaller --disk-mib-per-size, or another --disk-cache-dir");
            assertOneLineError(CliRun.of("bench", "offload", "--skip-bandwidth", "--skip-decode", "--disk-cache-dir", d),
                    "bench offload: the TTFT figures' disk tier holds the prefix's KV, 70.0 MiB of chunk files, and the filesystem "
                            + "of --disk-cache-dir " + d + " has 2.0 MiB free: give another --disk-cache-dir, or --skip-ttft");
        } finally {
            DiskOptions.usableSpace = usable;
        }
        assertThat(dir).isEmptyDirectory();
        assertThat(io.kvtier.bench.DiskBandwidth.peakFileBytes(new long[] {16 << 10}, 128L << 20)).isEqualTo(2L * 8192 * 20480);
    }

    /** The JDK's NoSuchFileException carries the path alone: "cannot open (/proc/kvtier-absent)" said no why. */
    @Test
    void aDiskDirThatCannotBeMadeSaysWhy() {
        assertOneLineError(CliRun.of("generate", "--prompt", "hi", "--max-tokens", "1", "--disk-cache-dir", "/proc/kvtier-absent"),
                "disk cache dir /proc/kvtier-absent: cannot open (/proc/kvtier-absent: No such file or directory)");
    }
}

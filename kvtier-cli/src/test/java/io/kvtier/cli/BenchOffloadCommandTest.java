package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.tier.remote.OwnRedis;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bench offload}'s flags are checked before any figure is measured (one line naming the
 * flag, exit 2, nothing printed on standard output), and its temp dir goes on a signal too.
 */
class BenchOffloadCommandTest {

    @TempDir
    Path dir;

    @Test
    void badFlagsExitTwoBeforeAnyFigure() throws Exception {
        Path text = dir.resolve("notamodel.txt");
        Files.writeString(text, "not a model at all, just some text that is long enough for a header\n".repeat(4));
        assertRefused("kvtier: --model: model file " + text + ": ", "bench", "offload", "--model", text.toString());
        assertRefused("kvtier: --ttft-model: model file " + text + ": ", "bench", "offload", "--ttft-model", text.toString());
        assertRefused("kvtier: --ttft-model " + dir.resolve("none.bin") + ": no such file",
                "bench", "offload", "--ttft-model", dir.resolve("none.bin").toString());
        assertRefused("kvtier: --ttft-model has no effect with --skip-ttft: the TTFT figures are skipped",
                "bench", "offload", "--ttft-model", text.toString(), "--skip-ttft");
        assertRefused("kvtier: --prompt-tokens has no effect with --skip-ttft: the TTFT figures are skipped",
                "bench", "offload", "--prompt-tokens", "100", "--skip-ttft");
        assertRefused("kvtier: --remote-mib-per-size needs --remote-url", "bench", "offload", "--remote-mib-per-size", "8");
        assertRefused("kvtier: --remote-requests needs --remote-url", "bench", "offload", "--remote-requests", "64");
        // Unbounded, a typo ran for ever (each round moves it four times), and 2^44 MiB overflowed to 0 bytes.
        assertRefused("kvtier: --remote-mib-per-size must be at most 65536 (64 GiB a chunk size, which each round moves four "
                + "times: the tier's store and load, redis-benchmark's SET and GET), got 99999999999\n", "bench", "offload",
                "--skip-decode", "--skip-bandwidth", "--skip-ttft", "--remote-url", "redis://127.0.0.1:1", "--remote-mib-per-size",
                "99999999999");
        // The filesystem's room bounds it, but 2^44 MiB overflowed to 0 bytes and ran 4 files a size.
        assertRefused("kvtier: --disk-mib-per-size must be at most 4194304 (4 TiB: a side writes at most 2^20 files of a size, "
                + "4 TiB of 4 MiB chunks), got 17592186044416\n", "bench", "offload", "--skip-decode", "--skip-ttft",
                "--disk-mib-per-size", "17592186044416");
        assertRefused("kvtier: --remote-requests must be at least 1, got 0", "bench", "offload", "--skip-decode", "--skip-bandwidth",
                "--skip-ttft", "--remote-url", "redis://127.0.0.1:1", "--remote-requests", "0");
        // A new user's trial: the README's cluster seeds were refused ("should be specified only once"), with no --remote-mode.
        assertRefused("kvtier: --remote-mode needs --remote-url", "bench", "offload", "--remote-mode", "cluster");
        assertRefused("kvtier: --remote-mode standalone takes one --remote-url, got 2 (give --remote-mode cluster for cluster seeds)",
                "bench", "offload", "--skip-decode", "--skip-bandwidth", "--skip-ttft", "--remote-url", "redis://127.0.0.1:1",
                "--remote-url", "redis://127.0.0.1:2");
        assertRefused("kvtier: --remote-mode must be standalone or cluster, got 'sentinel'", "bench", "offload", "--skip-decode",
                "--skip-bandwidth", "--skip-ttft", "--remote-url", "redis://127.0.0.1:1", "--remote-mode", "sentinel");
        // A new user's trial: an unreachable store was "internal error (a bug)" and a stack trace after the table's header.
        assertRefused("kvtier: --remote-url redis://127.0.0.1:1: cannot reach the store (connection refused)", "bench", "offload",
                "--skip-decode", "--skip-bandwidth", "--skip-ttft", "--remote-url", "redis://127.0.0.1:1");
    }

    /** A flag of a part that --skip-bandwidth or --skip-ttft skips is refused, not silently ignored (a new user's trial). */
    @Test
    void flagsOfASkippedPartAreRefused() {
        assertRefused("kvtier: --seconds-per-size has no effect with --skip-bandwidth: the bandwidth tables are skipped",
                "bench", "offload", "--skip-bandwidth", "--seconds-per-size", "0.1");
        assertRefused("kvtier: --seconds-per-size has no effect with --skip-bandwidth",
                "bench", "offload", "--skip-bandwidth", "--cold-disk", "--seconds-per-size", "0.1");
        assertRefused("kvtier: --disk-mib-per-size has no effect with --skip-bandwidth: the bandwidth tables are skipped "
                + "(only --cold-disk would still use it)", "bench", "offload", "--skip-bandwidth", "--disk-mib-per-size", "8");
        assertRefused("kvtier: --disk-cache-dir has no effect with --skip-bandwidth --skip-ttft: no figure left writes files",
                "bench", "offload", "--skip-bandwidth", "--skip-ttft", "--disk-cache-dir", dir.toString());
    }

    /** A new user's trial: every part skipped and no store printed nothing and exited 0. */
    @Test
    void skippingEveryFigureIsRefused() {
        assertRefused("kvtier: --skip-bandwidth, --skip-decode and --skip-ttft skip every figure: leave one out, or give "
                + "--remote-url or --cold-disk", "bench", "offload", "--skip-ttft", "--skip-decode", "--skip-bandwidth");
    }

    private static void assertRefused(String errStart, String... args) {
        CliRun r = CliRun.of(args);
        assertThat(r.code()).as(r.err()).isEqualTo(2);
        assertThat(r.err()).startsWith(errStart).endsWith("\n");
        assertThat(r.err().strip()).doesNotContain("\n");
        assertThat(r.out()).as("no figure measured").isEmpty();
    }

    /**
     * In a --disk-cache-dir of the user's, the disk bandwidth figure leaves nothing of its own (C2
     * of a new user's trial: an empty bandwidth directory stayed behind); what was there stays.
     */
    @Test
    void theBandwidthFigureLeavesNoDirectoryInTheUsersDir() throws Exception {
        Path mine = Files.createDirectory(dir.resolve("mine"));
        Files.writeString(mine.resolve("notes.txt"), "mine");
        CliRun r = CliRun.of("bench", "offload", "--disk-cache-dir", mine.toString(), "--skip-decode", "--skip-ttft",
                "--seconds-per-size", "0.05", "--disk-mib-per-size", "4", "--threads", "1");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).contains("== disk tier bandwidth");
        try (var left = Files.list(mine)) {
            assertThat(left.map(f -> f.getFileName().toString()).toList()).containsExactly("notes.txt");
        }
        Path before = Files.createDirectory(mine.resolve("bandwidth"));
        assertThat(BenchOffloadCommand.inOwnDir(before, () -> "figure")).isEqualTo("figure");
        assertThat(before).as("a directory the bench did not make").isDirectory();
    }

    @Test
    void aSignalDeletesTheTempDir() throws Exception {
        Path tmp = Files.createDirectory(dir.resolve("tmp"));
        Process p = ChildCli.startIn(tmp, dir.resolve("err.txt"), "bench", "offload", "--skip-ttft", "--seconds-per-size", "0.05",
                "--disk-mib-per-size", "4", "--threads", "1");
        long deadline = System.nanoTime() + 120_000_000_000L;
        while (benchDirs(tmp).isEmpty() || !Files.exists(benchDirs(tmp).getFirst().resolve("bandwidth"))) {
            assertThat(p.isAlive()).as("still measuring when the signal comes: " + ChildCli.stderr(dir.resolve("err.txt"))).isTrue();
            assertThat(System.nanoTime()).as("the disk-tier figures start").isLessThan(deadline);
            Thread.sleep(20);
        }
        p.destroy(); // SIGTERM
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).isEqualTo(143);
        assertThat(benchDirs(tmp)).as("temp dir deleted").isEmpty();
    }

    /**
     * A new user's trial: SIGINT during the remote table left the tier's 64 keys of 1 MiB on the
     * server, SIGTERM during redis-benchmark its key (the child ran on). Now a SIGTERM to the JVM
     * alone (as {@code kill} sends it) while redis-benchmark hangs, frozen here with its key
     * written, stops the child (its SIGTERM stays pending: then SIGKILL), and the hook deletes the
     * tier's keys and redis-benchmark's, saying so in one line.
     */
    @Test
    void aSignalDuringRedisBenchmarkStopsItAndRemovesTheRunsKeys() throws Exception {
        try (OwnRedis redis = OwnRedis.start(dir.resolve("redis"))) {
            Path err = dir.resolve("err.txt");
            Process p = ChildCli.start(err, "bench", "offload", "--remote-url", redis.url(), "--skip-bandwidth", "--skip-decode",
                    "--skip-ttft");
            try {
                long deadline = System.nanoTime() + 120_000_000_000L;
                ProcessHandle benchmark = null;
                while (benchmark == null) {
                    assertThat(p.isAlive()).as("still measuring: " + ChildCli.stderr(err)).isTrue();
                    assertThat(System.nanoTime()).as("redis-benchmark runs").isLessThan(deadline);
                    // A run of the table's (not the check's SET) that has written its key, frozen while it is.
                    ProcessHandle running = p.descendants().filter(h -> h.info().commandLine().orElse("").contains("set,get"))
                            .findFirst().orElse(null);
                    if (running != null && keyWritten(redis) && signal("STOP", running) && running.isAlive() && keyWritten(redis)) {
                        benchmark = running;
                    }
                    Thread.sleep(20);
                }
                assertThat(ChildCli.terminateWithin(p, 60)).isTrue();
                assertThat(p.exitValue()).isEqualTo(143);
                assertThat(benchmark.isAlive()).as("redis-benchmark stopped").isFalse();
                assertThat(redis.cli("DBSIZE")).as("nothing of the run left").isEqualTo("0");
                assertThat(ChildCli.stderr(err)).containsPattern("(?m)^kvtier: bench offload: stopped by a signal; removed "
                        + "\\d+ keys kvt:v1:bench[0-9a-f]{6}:\\* and key:__rand_int__ from " + redis.url() + "$");
            } finally {
                p.descendants().forEach(ProcessHandle::destroyForcibly); // a frozen redis-benchmark of a failed test
                p.destroyForcibly().waitFor();
            }
        }
    }

    private static boolean keyWritten(OwnRedis redis) throws Exception {
        return redis.cli("EXISTS", RemoteBandwidth.BENCHMARK_KEY).equals("1");
    }

    private static boolean signal(String signal, ProcessHandle h) throws Exception {
        return new ProcessBuilder("kill", "-" + signal, String.valueOf(h.pid())).start().waitFor() == 0;
    }

    private static List<Path> benchDirs(Path tmp) throws java.io.IOException {
        try (var files = Files.list(tmp)) {
            return files.filter(f -> f.getFileName().toString().startsWith("kvtier-bench-disk")).toList();
        }
    }
}

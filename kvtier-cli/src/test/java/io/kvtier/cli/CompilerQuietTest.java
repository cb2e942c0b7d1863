package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CompilerQuietTest {

    @Test
    void findsThisJvmsC2ThreadsByTheNameLinuxGivesThem() {
        assumeTrue(Files.isDirectory(Path.of("/proc/self/task")), "Linux only");
        assumeTrue(ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
                .noneMatch(a -> a.startsWith("-XX:TieredStopAtLevel") || a.equals("-Xint")), "a JVM with C2");
        // HotSpot names them "C2 CompilerThread<n>"; the kernel keeps 15 characters. A rename would
        // silently turn the wait off: this fails instead.
        assertThat(CompilerQuiet.ofThisProcess().threads()).isPositive();
    }

    @Test
    void withNoC2ThreadTheWaitReturnsFalseAtOnce() {
        long start = System.nanoTime();
        assertThat(new CompilerQuiet(List.of()).awaitQuiet(5_000_000_000L)).isFalse();
        assertThat(System.nanoTime() - start).as("no wait at all").isLessThan(1_000_000_000L);
    }

    @Test
    void aThreadThatSleepsAndGainsNoRunTimeIsQuietAfterTheLooksAndABusyOneNever(@TempDir Path dir) throws IOException {
        Path sleeping = task(dir.resolve("1"), 'S', 123_456);
        assertThat(new CompilerQuiet(List.of(sleeping)).awaitQuiet(5_000_000_000L)).isTrue();

        Path running = task(dir.resolve("2"), 'R', 123_456);
        long start = System.nanoTime();
        assertThat(new CompilerQuiet(List.of(sleeping, running)).awaitQuiet(50_000_000L))
                .as("one C2 thread still running: not quiet, the bound ends the wait").isFalse();
        assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(50_000_000L);
    }

    /** The run time bench warm-ups watch ({@link io.kvtier.bench.JitWarmUp}): every thread's, an ended one's as 0. */
    @Test
    void theC2ThreadsRunTimeIsTheSumOfTheirsAndAnEndedThreadCountsNothing(@TempDir Path dir) throws IOException {
        Path sleeping = task(dir.resolve("1"), 'S', 123_456);
        Path running = task(dir.resolve("2"), 'R', 1_000_000);
        assertThat(io.kvtier.bench.CompilerThreads.runNanos(List.of(sleeping, running, dir.resolve("ended"))))
                .isEqualTo(1_123_456);
        assertThat(io.kvtier.bench.CompilerThreads.sample(running).asleep()).isFalse();
    }

    /** A fake {@code /proc/self/task/<tid>} with the two files read: {@code stat} (state) and {@code schedstat} (run ns). */
    private static Path task(Path dir, char state, long runNanos) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("comm"), "C2 CompilerThre\n");
        Files.writeString(dir.resolve("stat"), "4242 (C2 CompilerThre) " + state + " 1 2 3 4 5 6 7 8 9 10 11 12 13\n");
        Files.writeString(dir.resolve("schedstat"), runNanos + " 2000 3\n");
        return dir;
    }
}

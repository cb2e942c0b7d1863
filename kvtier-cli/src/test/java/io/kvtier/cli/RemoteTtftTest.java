package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The remote TTFT figures of {@code bench offload --remote-url}: medians of each side, of the pairs' own ratios, of the step alone. */
class RemoteTtftTest {

    private static RemoteTtft.Sample[] pair(double recomputeWall, double remoteWall, double recomputeCpu, double remoteCpu,
                                            double step) {
        return new RemoteTtft.Sample[] {new RemoteTtft.Sample(recomputeWall, recomputeCpu), new RemoteTtft.Sample(remoteWall, remoteCpu),
                new RemoteTtft.Sample(step, 2 * step)};
    }

    /** Was 3 + i: past id 511 of a 512-token vocabulary from --repeats 510 on (its most is 1000). */
    @Test
    void everyRepeatsPromptIsItsOwnAndInsideTheVocabulary() {
        int[] prompt = BenchOffloadCommand.ttftPrompt(new io.kvtier.model.ModelConfig(64, 128, 2, 4, 4, 259, 64, true), 40);
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (int i = 0; i <= 1000; i++) {
            int[] p = RemoteTtft.promptOfRepeat(prompt, i, 259);
            assertThat(p).hasSize(prompt.length);
            assertThat(java.util.Arrays.stream(p).max().getAsInt()).isLessThan(259);
            assertThat(java.util.Arrays.copyOfRange(p, 3, p.length)).containsExactly(java.util.Arrays.copyOfRange(prompt, 3, prompt.length));
            assertThat(seen.add(p[1] + "," + p[2])).as("repeat %d", i).isTrue();
        }
        assertThat(RemoteTtft.promptOfRepeat(prompt, 0, 259)[1]).isEqualTo(3);
        assertThat(RemoteTtft.promptOfRepeat(prompt, 256, 259)).startsWith(1, 3, 4);
    }

    @Test
    void theRatioIsTheMedianOfThePairsOwnRatiosNotTheRatioOfTheMedians() {
        // Wall ratios 10, 4, 6 (median 6; the medians' ratio would be 2.0 / 0.25 = 8); CPU ratios 8, 2, 5.
        String r = RemoteTtft.report(new RemoteTtft.Sample[][] {
                pair(2.0, 0.2, 4.0, 0.5, 0.05), pair(1.0, 0.25, 1.0, 0.5, 0.04), pair(3.0, 0.5, 5.0, 1.0, 0.1)}, "redis://h:1", 1);
        assertThat(r).contains("prefix from remote:     250.00 ms  (6.0x faster than recompute 2000.00 ms: median of 3 pairs' own ratios, range 4.0-10.0x");
        assertThat(r).contains("by process CPU:       500.00 ms  (5.0x less than recompute 4000.00 ms, range 2.0-8.0x)");
        assertThat(r).contains("promotion from redis://h:1, load");
        // Steps 50, 40, 100 ms (median 50, CPU twice that); the hits beyond them 150, 210, 400 ms (median 210).
        assertThat(r).contains("the step alone:        50.00 ms  (process CPU 100.00 ms; the prompt again, its prefix on the device); "
                + "the remote hit beyond it 210.00 ms");
    }

    /**
     * The JDK's process CPU time counts in 10 ms ticks on Linux: a figure from such a clock is
     * given in whole ms with its step, never as "10.00 ms" (a new user's reading).
     */
    @Test
    void aCoarseCpuClockGivesWholeMillisecondsAndSaysItsTick() {
        String r = RemoteTtft.report(new RemoteTtft.Sample[][] {pair(0.2, 0.05, 0.03, 0.01, 0.005)}, "redis://h:1",
                10_000_000L);
        assertThat(r).contains("by process CPU:           10 ms  (3.0x less than recompute 30 ms, range 3.0-3.0x;"
                + " process CPU in 10 ms ticks)");
        assertThat(r).contains("(process CPU 10 ms; the prompt again");
    }

    /** The process CPU clock counts every thread of the process, at a step finer than the kernel's 10 ms tick here. */
    @Test
    void theProcessCpuClockIsFinerThanTicksAndCountsOtherThreads() throws InterruptedException {
        long before = ProcessCpu.nanos();
        Thread t = new Thread(() -> {
            long end = System.nanoTime() + 30_000_000L;
            double x = 0;
            while (System.nanoTime() < end) {
                x += Math.sqrt(x + 1);
            }
            if (x < 0) {
                throw new AssertionError(x);
            }
        });
        t.start();
        t.join();
        // The thread ended before the second reading: its CPU time still counts (a sum over live threads would lose it).
        assertThat(ProcessCpu.nanos() - before).isPositive();
        if (System.getProperty("os.name").toLowerCase(java.util.Locale.ROOT).contains("linux")) {
            assertThat(ProcessCpu.resolutionNanos()).isEqualTo(1);
            long a = ProcessCpu.nanos();
            long b = ProcessCpu.nanos();
            while (b == a) {
                b = ProcessCpu.nanos();
            }
            assertThat(b - a).as("a step of the clock").isLessThan(1_000_000L);
        }
    }
}

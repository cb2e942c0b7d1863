package io.kvtier.cli;

import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;

/**
 * Diagnostics of the warm start ({@code -Dkvtier.warmup.debug=true}): the wall and engine-thread
 * CPU time of each step of a {@code generate} run, printed after the run with each step's start
 * as JVM uptime in milliseconds (the clock of {@code -XX:+PrintCompilation} and {@code -Xlog}),
 * so a slow step can be matched with the compiles, deoptimizations or pauses around it.
 */
final class StepTimes {

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private final long originNanos;
    private long[] startNanos = new long[1024];
    private long[] wallNanos = new long[1024];
    private long[] cpuNanos = new long[1024];
    private int steps;
    private long stepStart;
    private long stepCpu;

    /** @param originNanos {@code System.nanoTime()} at the JVM's start (uptime 0) */
    private StepTimes(long originNanos) {
        this.originNanos = originNanos;
    }

    /** A recorder when {@code kvtier.warmup.debug} is set, else null. */
    static StepTimes ifDebug() {
        if (!Boolean.getBoolean("kvtier.warmup.debug")) {
            return null;
        }
        long uptimeMillis = ManagementFactory.getRuntimeMXBean().getUptime();
        return new StepTimes(System.nanoTime() - uptimeMillis * 1_000_000L);
    }

    /** Before a step, on the engine thread. */
    void begin() {
        stepCpu = THREADS.getCurrentThreadCpuTime();
        stepStart = System.nanoTime();
    }

    /** After a step (and its printing), on the engine thread. */
    void end() {
        long now = System.nanoTime();
        long cpu = THREADS.getCurrentThreadCpuTime();
        if (steps == startNanos.length) {
            startNanos = Arrays.copyOf(startNanos, steps * 2);
            wallNanos = Arrays.copyOf(wallNanos, steps * 2);
            cpuNanos = Arrays.copyOf(cpuNanos, steps * 2);
        }
        startNanos[steps] = stepStart;
        wallNanos[steps] = now - stepStart;
        cpuNanos[steps] = cpu - stepCpu;
        steps++;
    }

    /** One line per step: index, start (uptime ms), wall µs, CPU µs; then the totals. */
    void print(PrintStream err) {
        long wall = 0, cpu = 0;
        for (int i = 0; i < steps; i++) {
            err.printf("kvtier: step %d at %.3f ms: wall %.1f us, cpu %.1f us%n", i,
                    (startNanos[i] - originNanos) / 1e6, wallNanos[i] / 1e3, cpuNanos[i] / 1e3);
            wall += wallNanos[i];
            cpu += cpuNanos[i];
        }
        err.printf("kvtier: steps %d: wall %.3f ms, engine thread cpu %.3f ms%n", steps, wall / 1e6, cpu / 1e6);
    }
}

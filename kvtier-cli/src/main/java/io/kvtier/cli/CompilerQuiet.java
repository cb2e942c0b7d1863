package io.kvtier.cli;

import io.kvtier.bench.CompilerThreads;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * Whether HotSpot's C2 compiler threads have run out of work ({@link CompilerThreads}): a C2
 * thread whose queue is empty waits on it, so it is sleeping and its run time stops growing. The warm
 * start ({@link Warmup}) waits for that before the user's first step, so that the forward
 * pass's methods still queued for C2 when the warm-up's tokens are done are compiled before the
 * run rather than during it (warm8: 6-19 such tasks at the first step, the run at C1 speed).
 *
 * <p>Linux only: elsewhere, or when no C2 thread is found (a JVM without C2, a name HotSpot
 * changed), {@link #awaitQuiet} returns at once with {@code false}. Nothing here blocks for
 * longer than its bound, and a read error counts as quiet (the wait is an optimisation only).
 */
final class CompilerQuiet {

    /** Interval between looks, in nanoseconds. */
    private static final long POLL_NANOS = 1_000_000L;
    /** Consecutive looks with every C2 thread asleep and no C2 run time gained that count as quiet. */
    static final int QUIET_LOOKS = 4;

    private final List<Path> c2Tasks;

    /** @param c2Tasks {@code /proc/self/task/<tid>} directories of the C2 threads to watch */
    CompilerQuiet(List<Path> c2Tasks) {
        this.c2Tasks = c2Tasks;
    }

    /** This process's C2 threads (none outside Linux or without C2). */
    static CompilerQuiet ofThisProcess() {
        return new CompilerQuiet(CompilerThreads.ofThisProcess());
    }

    /** C2 threads found (0 = the wait is skipped). */
    int threads() {
        return c2Tasks.size();
    }

    /**
     * Waits until C2 has been idle for {@link #QUIET_LOOKS} consecutive looks about a millisecond
     * apart, at most {@code maxNanos}.
     *
     * @return true when C2 went quiet, false when the bound passed first or no C2 thread is known
     */
    boolean awaitQuiet(long maxNanos) {
        if (c2Tasks.isEmpty()) {
            return false;
        }
        long deadline = System.nanoTime() + maxNanos;
        long lastRun = -1;
        int quiet = 0;
        while (true) {
            long run = 0;
            boolean asleep = true;
            for (Path t : c2Tasks) {
                CompilerThreads.Sample s = CompilerThreads.sample(t);
                run += s.runNanos();
                asleep &= s.asleep();
            }
            quiet = asleep && run == lastRun ? quiet + 1 : 0;
            lastRun = run;
            if (quiet >= QUIET_LOOKS) {
                return true;
            }
            if (System.nanoTime() - deadline >= 0) {
                return false;
            }
            LockSupport.parkNanos(POLL_NANOS);
        }
    }
}

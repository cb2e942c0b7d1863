package io.kvtier.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;

/**
 * Whether HotSpot's C2 compiler threads have run out of work, seen from Linux's
 * {@code /proc/self/task}: a C2 thread whose queue is empty waits on it, so it is sleeping
 * (state {@code S}) and its run time ({@code schedstat}, nanoseconds) stops growing. The warm
 * start ({@link Warmup}) waits for that before the user's first step, so that the forward
 * pass's methods still queued for C2 when the warm-up's tokens are done are compiled before the
 * run rather than during it (warm8: 6-19 such tasks at the first step, the run at C1 speed).
 *
 * <p>Linux only: elsewhere, or when no C2 thread is found (a JVM without C2, a name HotSpot
 * changed), {@link #awaitQuiet} returns at once with {@code false}. Nothing here blocks for
 * longer than its bound, and a read error counts as quiet (the wait is an optimisation only).
 */
final class CompilerQuiet {

    /** The kernel's name of HotSpot's C2 threads ("C2 CompilerThread0", cut to 15 characters). */
    private static final String C2_PREFIX = "C2 CompilerThre";
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
        List<Path> found = new ArrayList<>();
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            for (Path t : (Iterable<Path>) tasks::iterator) {
                try {
                    if (Files.readString(t.resolve("comm")).startsWith(C2_PREFIX)) {
                        found.add(t);
                    }
                } catch (IOException e) {
                    // the thread ended
                }
            }
        } catch (IOException | RuntimeException e) {
            return new CompilerQuiet(List.of());
        }
        return new CompilerQuiet(List.copyOf(found));
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
                Sample s = sample(t);
                run += s.runNanos;
                asleep &= s.asleep;
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

    private record Sample(long runNanos, boolean asleep) {
    }

    /** One thread's run time and whether it sleeps; a thread that ended (or any read error) is idle. */
    private static Sample sample(Path task) {
        try {
            String stat = Files.readString(task.resolve("stat"));
            char state = stat.charAt(stat.lastIndexOf(')') + 2);
            String sched = Files.readString(task.resolve("schedstat"));
            long run = Long.parseLong(sched.substring(0, sched.indexOf(' ')));
            return new Sample(run, state == 'S');
        } catch (IOException | RuntimeException e) {
            return new Sample(0, true);
        }
    }
}

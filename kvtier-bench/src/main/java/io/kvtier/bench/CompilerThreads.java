package io.kvtier.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * HotSpot's C2 compiler threads of this process, seen from Linux's {@code /proc/self/task}: a C2
 * thread's run time ({@code schedstat}, nanoseconds) grows while it compiles, and it sleeps (state
 * {@code S}) when its queue is empty. The JVM's own compilation time grows only when a compile
 * ends, so a C2 compile of a few seconds (a Vector API loop on a busy machine) looks quiet there.
 *
 * <p>Linux only: elsewhere, or when no C2 thread is found (a JVM without C2, a name HotSpot
 * changed), there are none. A thread that ended, or any read error, counts as asleep with no run time.
 */
public final class CompilerThreads {

    /** The kernel's name of HotSpot's C2 threads ("C2 CompilerThread0", cut to 15 characters). */
    private static final String C2_PREFIX = "C2 CompilerThre";

    private CompilerThreads() {
    }

    /** One thread's run time so far and whether it sleeps. */
    public record Sample(long runNanos, boolean asleep) {
    }

    /** This process's C2 threads, as their {@code /proc/self/task/<tid>} directories (none outside Linux or without C2). */
    public static List<Path> ofThisProcess() {
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
            return List.of();
        }
        return List.copyOf(found);
    }

    /** {@code task}'s run time and state. */
    public static Sample sample(Path task) {
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

    /** The run time of {@code tasks} together, ns. */
    public static long runNanos(List<Path> tasks) {
        long run = 0;
        for (Path t : tasks) {
            run += sample(t).runNanos();
        }
        return run;
    }
}

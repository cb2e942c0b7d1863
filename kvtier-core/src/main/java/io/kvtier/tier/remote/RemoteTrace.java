package io.kvtier.tier.remote;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Timestamps of the phases of a remote hit (lookup, probe, GETs sent, each value received,
 * verified and copied, the load applied, the step), for finding where its time to first token
 * goes. Off unless the JVM runs with {@code -Dkvtier.remote.trace=true}; callers test {@link #ON}
 * before building a label, so an untraced run pays one static final branch per mark. Any thread.
 */
public final class RemoteTrace {

    /** Whether marks are recorded ({@code -Dkvtier.remote.trace=true}). */
    public static final boolean ON = Boolean.getBoolean("kvtier.remote.trace");

    private record Mark(long nanos, String thread, String what) {
    }

    private static final ConcurrentLinkedQueue<Mark> MARKS = new ConcurrentLinkedQueue<>();

    private RemoteTrace() {
    }

    /** Records {@code what} now, with the calling thread's name (no-op unless {@link #ON}). */
    public static void mark(String what) {
        if (ON) {
            MARKS.add(new Mark(System.nanoTime(), Thread.currentThread().getName(), what));
        }
    }

    /** Forgets every mark recorded so far. */
    public static void clear() {
        MARKS.clear();
    }

    /**
     * The marks recorded since the last {@link #clear}, oldest first, one line each: milliseconds
     * since the first mark, since the mark before, the thread and the label; after them, the first
     * mark's {@link System#nanoTime()} (CLOCK_MONOTONIC on Linux, so a {@code perf sched record -k mono}
     * of the same run lines up with the marks) and its wall-clock time (a JFR recording's event times).
     */
    public static List<String> table() {
        List<Mark> marks = new ArrayList<>(MARKS);
        marks.sort((a, b) -> Long.compare(a.nanos(), b.nanos()));
        List<String> lines = new ArrayList<>(marks.size());
        long first = marks.isEmpty() ? 0 : marks.getFirst().nanos();
        long prev = first;
        for (Mark m : marks) {
            lines.add(String.format("%9.3f %+8.3f  %-28s %s", (m.nanos() - first) / 1e6, (m.nanos() - prev) / 1e6,
                    m.thread(), m.what()));
            prev = m.nanos();
        }
        if (!marks.isEmpty()) {
            java.time.Instant wall = java.time.Instant.now().minusNanos(System.nanoTime() - first);
            lines.add(String.format("%9s (the first mark at System.nanoTime() %d ns, %s)", "", first, wall));
        }
        return lines;
    }
}

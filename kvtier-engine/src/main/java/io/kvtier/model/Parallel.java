package io.kvtier.model;

import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinTask;

/**
 * Splits a range of independent items (output rows, attention heads) across a ForkJoinPool,
 * but only when there is enough work: below {@link #MIN_PARALLEL_WORK} multiply-adds the
 * hand-off to another core (tens of microseconds to wake a parked worker) costs more than it
 * saves, which matters for small models whose whole step takes well under a millisecond.
 * The calling thread computes the first part itself.
 */
final class Parallel {

    /** Multiply-adds below which work stays on the calling thread (measured, see ForwardSpeed). */
    static final long MIN_PARALLEL_WORK = Long.getLong("kvtier.parallel.minWork", 1L << 17);

    /** A piece of work over items {@code from..to-1}; {@code part} indexes per-part scratch. */
    @FunctionalInterface
    interface RangeTask {
        void run(int part, int from, int to);
    }

    private final ForkJoinPool pool;
    private final int parts;

    Parallel(ForkJoinPool pool) {
        this.pool = pool;
        this.parts = Math.max(1, pool.getParallelism());
    }

    /** Largest number of parts a range is split into; size of per-part scratch. */
    int parts() {
        return parts;
    }

    /**
     * Runs {@code task} over {@code 0..items-1}, in parts whose boundaries are multiples of
     * {@code align} (so that matmul tiles are not cut), on several threads when {@code work}
     * is at least {@link #MIN_PARALLEL_WORK}.
     */
    void forRange(int items, int align, long work, RangeTask task) {
        int n = work < MIN_PARALLEL_WORK ? 1 : Math.min(parts, Math.max(1, items / Math.max(1, align)));
        if (n <= 1) {
            task.run(0, 0, items);
            return;
        }
        ForkJoinTask<?>[] forked = new ForkJoinTask<?>[n - 1];
        int units = (items + align - 1) / align;
        for (int p = 1; p < n; p++) {
            int from = Math.min(items, (int) ((long) units * p / n) * align);
            int to = Math.min(items, (int) ((long) units * (p + 1) / n) * align);
            int part = p;
            forked[p - 1] = pool.submit(() -> task.run(part, from, to));
        }
        try {
            task.run(0, 0, Math.min(items, (int) ((long) units / n) * align));
        } finally {
            // Join every part even when ours failed: none may still write scratch after we return.
            for (ForkJoinTask<?> f : forked) {
                f.quietlyJoin();
            }
        }
        for (ForkJoinTask<?> f : forked) {
            f.join();
        }
    }
}

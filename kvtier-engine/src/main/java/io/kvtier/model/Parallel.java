package io.kvtier.model;

import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Splits a range of independent items (output rows, attention heads) across the threads of a
 * ForkJoinPool, for ranges with enough work to repay the hand-off.
 *
 * <p>A range is cut into a few parts per thread that every participant claims from an atomic
 * counter: the calling thread starts on them at once, and the pool tasks submitted for the
 * other threads join in when they are scheduled. Waking a parked pool worker takes tens of
 * microseconds (measured ~30 us on the 2-vCPU VM) and a vCPU may be preempted by the host; with
 * claiming, a late helper costs only the parts the caller had to do itself, never a wait for a
 * fixed half. The caller returns once every part is done.
 */
final class Parallel {

    /** Multiply-adds below which a range stays on the calling thread (see ForwardSpeed). */
    static final long MIN_PARALLEL_WORK = Long.getLong("kvtier.parallel.minWork", 1L << 18);
    /** Parts per thread: small enough pieces that a preempted helper delays little. */
    private static final int PARTS_PER_THREAD = 4;

    /** A piece of work over items {@code from..to-1}; {@code worker} (0 = caller) indexes per-thread scratch. */
    @FunctionalInterface
    interface RangeTask {
        void run(int worker, int from, int to);
    }

    private final ForkJoinPool pool;
    private final int threads;

    Parallel(ForkJoinPool pool) {
        this.pool = pool;
        this.threads = Math.max(1, pool.getParallelism());
    }

    /** Most threads that work on one range, the caller included; size of per-thread scratch. */
    int threads() {
        return threads;
    }

    /**
     * Runs {@code task} over {@code 0..items-1} in parts whose boundaries are multiples of
     * {@code align} (so that matmul tiles are not cut), across the pool when {@code work}
     * (multiply-adds) is at least {@link #MIN_PARALLEL_WORK}.
     */
    void forRange(int items, int align, long work, RangeTask task) {
        int units = (items + align - 1) / align;
        int parts = Math.min(units, threads * PARTS_PER_THREAD);
        if (threads == 1 || work < MIN_PARALLEL_WORK || parts < 2) {
            task.run(0, 0, items);
            return;
        }
        Job job = new Job(task, items, align, units, parts);
        for (int worker = 1; worker < threads; worker++) {
            int id = worker;
            pool.execute(() -> job.work(id));
        }
        job.work(0);
        while (job.done.get() < parts) {
            Thread.yield();   // a helper is finishing a part; give it the CPU if it shares ours
        }
        Throwable failure = job.failure;
        if (failure instanceof RuntimeException e) {
            throw e;
        } else if (failure instanceof Error e) {
            throw e;
        } else if (failure != null) {
            throw new IllegalStateException(failure);
        }
    }

    /** One range cut into parts, each claimed by whoever comes first. */
    private static final class Job {
        final RangeTask task;
        final int items, align, units, parts;
        final AtomicInteger next = new AtomicInteger();
        final AtomicInteger done = new AtomicInteger();
        volatile Throwable failure;

        Job(RangeTask task, int items, int align, int units, int parts) {
            this.task = task;
            this.items = items;
            this.align = align;
            this.units = units;
            this.parts = parts;
        }

        void work(int worker) {
            int p;
            while ((p = next.getAndIncrement()) < parts) {
                int from = (int) ((long) units * p / parts) * align;
                int to = Math.min(items, (int) ((long) units * (p + 1) / parts) * align);
                try {
                    task.run(worker, from, to);
                } catch (Throwable t) {
                    failure = t;
                } finally {
                    done.incrementAndGet();
                }
            }
        }
    }
}

package io.kvtier.model;

import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Splits ranges of independent items (output rows, attention heads) across the threads of a
 * ForkJoinPool during one forward pass.
 *
 * <p>Why not one pool task per range: waking a parked pool worker costs tens of microseconds
 * (measured ~30 us on the 2-core VM), and a step has ~40 ranges, some of a few microseconds.
 * Instead {@link #begin} starts, once per step, helper tasks on the pool that spin between
 * ranges; {@link #forRange} publishes a range as a {@link Job} whose parts every participant
 * (the calling thread and the helpers) claims from an atomic counter. The caller never waits for
 * a helper to arrive: a part nobody has claimed yet, it computes itself, so a late or absent
 * helper only costs speed. {@link #end} releases the helpers. Steps and ranges too small to
 * repay even that stay on the calling thread.
 */
final class Parallel {

    /** Multiply-adds in a step below which no helper is started (a tiny model's whole step). */
    static final long MIN_STEP_WORK = Long.getLong("kvtier.parallel.minStepWork", 1L << 21);
    /** Multiply-adds in a range below which it runs on the calling thread. */
    static final long MIN_RANGE_WORK = Long.getLong("kvtier.parallel.minRangeWork", 1L << 14);
    /** Parts per participating thread: a little slack for uneven progress. */
    private static final int PARTS_PER_THREAD = 4;

    /** A piece of work over items {@code from..to-1}; {@code worker} (0 = caller) indexes per-thread scratch. */
    @FunctionalInterface
    interface RangeTask {
        void run(int worker, int from, int to);
    }

    private final ForkJoinPool pool;
    private final int threads;
    private Session session;

    Parallel(ForkJoinPool pool) {
        this.pool = pool;
        this.threads = Math.max(1, Math.min(pool.getParallelism(), Runtime.getRuntime().availableProcessors()));
    }

    /** Participants at most (caller included); size of per-thread scratch. */
    int threads() {
        return threads;
    }

    /** Starts helpers for one step of {@code stepWork} multiply-adds, if it is worth it. */
    void begin(long stepWork) {
        end();
        if (threads > 1 && stepWork >= MIN_STEP_WORK) {
            Session s = new Session();
            for (int worker = 1; worker < threads; worker++) {
                int id = worker;
                pool.execute(() -> s.help(id));
            }
            session = s;
        }
    }

    /** Releases the helpers of the current step (they return to the pool). */
    void end() {
        if (session != null) {
            session.running = false;
            session = null;
        }
    }

    /**
     * Runs {@code task} over {@code 0..items-1} in parts whose boundaries are multiples of
     * {@code align} (so that matmul tiles are not cut), across the step's helpers when
     * {@code work} (multiply-adds) is large enough. Returns when every part is done.
     */
    void forRange(int items, int align, long work, RangeTask task) {
        Session s = session;
        int units = (items + align - 1) / align;
        int parts = Math.min(units, threads * PARTS_PER_THREAD);
        if (s == null || work < MIN_RANGE_WORK || parts < 2) {
            task.run(0, 0, items);
            return;
        }
        Job job = new Job(task, items, align, units, parts);
        s.current = job;
        job.work(0);
        while (job.done.get() < parts) {
            Thread.onSpinWait();
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

    /** The helpers of one step. */
    private static final class Session {
        volatile boolean running = true;
        volatile Job current;

        void help(int worker) {
            Job last = null;
            while (running) {
                Job j = current;
                if (j != null && j != last) {
                    j.work(worker);
                    last = j;
                } else {
                    Thread.onSpinWait();
                }
            }
        }
    }

    /** One range split into parts, claimed by whoever comes first. */
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

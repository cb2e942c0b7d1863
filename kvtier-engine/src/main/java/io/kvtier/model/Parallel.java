package io.kvtier.model;

import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * Splits a range of independent items (output rows, attention heads) across the threads of a
 * ForkJoinPool, for ranges with enough work to repay the hand-off.
 *
 * <p>A range is cut into a few parts per thread that every participant claims from an atomic
 * counter: the calling thread starts on them at once and finishes every part no helper claimed,
 * so a helper that comes late (or never) costs only the parts the caller did itself, never a
 * wait for a fixed share, and no result depends on which thread ran which part.
 *
 * <p>Parts shrink as the range goes on: part {@code p} of {@code P} covers the units from
 * {@code units - units (P-p)^2 / P^2} to {@code units - units (P-p-1)^2 / P^2}, so the first is
 * about {@code 2/P} of the range and the last about {@code 1/P^2}. A range ends when its last
 * part does, and the other threads are idle meanwhile: with equal parts that is half a part on
 * average (1/8 of a 2-thread range cut in 4), with shrinking ones about the size of the last
 * parts (a sixteenth of the range at 4 parts).
 *
 * <p>Small ranges get fewer parts: at most one per {@link #MIN_PART_WORK} multiply-adds (never
 * fewer than one per thread). Each part costs its thread some fixed work (the kernels' set-up per
 * call, attention's per-head calls), and the 15M shape's layer ranges are only 5-25 us long:
 * cut in 8 they lost more to that than the second thread gained (decode at 2 threads no faster
 * than at 1 on the 15M Q4_0 shape; docs/bandwidth-bound.md, "Parts with work enough").
 *
 * <p>Hand-off: waking a parked pool worker takes tens of microseconds (~30 us measured on the
 * 2-vCPU VM), as long as a small matrix-vector product. So a helper, once woken, stays for the
 * next range: it spins for it for at most {@link #SPIN_NANOS} after its last part (the gap
 * between the ranges of one forward step is a few microseconds), then returns its worker to the
 * pool, which parks it. Within a step the hand-off is a volatile read; between steps (and on a
 * loaded machine, where spinning would take a core from other work) the helper is parked. A
 * helper slot runs at most one spinning task at a time ({@link #state}).
 */
final class Parallel {

    /**
     * Default of {@link #MIN_PARALLEL_WORK}: several microseconds of work, longer than a hand-off
     * to a spinning helper. 2^16, not 2^15: stories260K's classifier (512 x 64, exactly 2^15) was
     * its only split range, one per step, so the helper woke for 2-3 us of work and then spun
     * 50 us of every ~120 us step on the second vCPU, which a fresh process's JIT threads needed
     * (its steps' wall time was twice their CPU time). The 15M shape's smallest range (288 x 288)
     * still splits.
     */
    static final long MIN_PARALLEL_WORK_DEFAULT = 1L << 16;
    /** Multiply-adds below which a range stays on the calling thread (property {@code kvtier.parallel.minWork}). */
    static final long MIN_PARALLEL_WORK = Long.getLong("kvtier.parallel.minWork", MIN_PARALLEL_WORK_DEFAULT);
    /** How long an idle helper waits, spinning, for the next range before it parks. */
    static final long SPIN_NANOS = Long.getLong("kvtier.parallel.spinNanos", 50_000L);
    /**
     * Whether parts shrink towards a range's end (property {@code kvtier.parallel.guided=true});
     * default equal parts, which did as well or better idle (docs/bandwidth-bound.md).
     */
    static final boolean GUIDED = "true".equals(System.getProperty("kvtier.parallel.guided"));
    /**
     * Parts per thread (property {@code kvtier.parallel.partsPerThread}): two, so a preempted
     * helper delays the caller by at most half its share, and few enough that the claims and each
     * part's set-up stay small. Four cost the 110M shape's 2-thread Q4_0 step 9% and its Q8_0 step
     * 4% idle, and the 15M shapes nothing (docs/bandwidth-bound.md, "Two parts per thread").
     */
    static final int PARTS_PER_THREAD = Integer.getInteger("kvtier.parallel.partsPerThread", 2);
    /** Default of {@link #MIN_PART_WORK}: 2^18 multiply-adds, about 8 us of Q4_0 work on one core. */
    static final long MIN_PART_WORK_DEFAULT = 1L << 18;
    /** Multiply-adds a part of a range gets at least, when the range allows more than one part per thread (property {@code kvtier.parallel.minPartWork}). */
    static final long MIN_PART_WORK = Long.getLong("kvtier.parallel.minPartWork", MIN_PART_WORK_DEFAULT);
    /** Caller's polls of a helper's last part before it yields its CPU (the helper may share it). */
    private static final int CALLER_SPINS = 2_000;

    private static final int PARKED = 0, SPINNING = 1;

    /** A piece of work over items {@code from..to-1}; {@code worker} (0 = caller) indexes per-thread scratch. */
    @FunctionalInterface
    interface RangeTask {
        void run(int worker, int from, int to);
    }

    private final ForkJoinPool pool;
    private final int threads;
    /** Per helper (index 1..threads-1): PARKED (no task in the pool) or SPINNING (a task is running or queued). */
    private final AtomicIntegerArray state;
    /** The latest range; helpers take each new one they see. */
    private volatile Job current;

    private final long spinNanos;
    private final long minWork;
    /** Parts of a range shrink towards its end (else they are equal); see the class comment. */
    private final boolean guided;
    private final int partsPerThread;
    /** Multiply-adds below which a part is not cut further (see the class comment). */
    private final long minPartWork;
    /** Ranges handed to the pool (each a fork and a join of the caller with its helpers); caller thread only. */
    private long splits;
    /** Time the caller spent waiting for helpers' parts after it found no part left to claim; caller thread only. */
    private long waitNanos;
    /** Parts of split ranges, all and those the caller ran itself; caller thread only. */
    private long parts, callerParts;
    /** Helper tasks submitted to the pool (a parked worker woken); caller thread only. */
    private long wakes;

    Parallel(ForkJoinPool pool) {
        this(pool, SPIN_NANOS, MIN_PARALLEL_WORK);
    }

    /** With another spin time (0: park after every range) and threshold, for comparisons. */
    Parallel(ForkJoinPool pool, long spinNanos, long minWork) {
        this(pool, spinNanos, minWork, GUIDED, PARTS_PER_THREAD);
    }

    /** With equal parts instead of shrinking ones ({@code guided} false) and another count of parts per thread, for comparisons. */
    Parallel(ForkJoinPool pool, long spinNanos, long minWork, boolean guided, int partsPerThread) {
        this(pool, spinNanos, minWork, guided, partsPerThread, MIN_PART_WORK);
    }

    /** With another least work per part ({@code minPartWork}; 1: always {@code partsPerThread} parts per thread), for comparisons. */
    Parallel(ForkJoinPool pool, long spinNanos, long minWork, boolean guided, int partsPerThread, long minPartWork) {
        if (partsPerThread < 1 || minPartWork < 1) {
            throw new IllegalArgumentException("parts per thread and work per part must be at least 1, got "
                    + partsPerThread + " and " + minPartWork);
        }
        this.minPartWork = minPartWork;
        this.guided = guided;
        this.partsPerThread = partsPerThread;
        this.pool = pool;
        this.threads = Math.max(1, pool.getParallelism());
        this.state = new AtomicIntegerArray(threads);
        this.spinNanos = spinNanos;
        this.minWork = minWork;
    }

    /** Most threads that work on one range, the caller included; size of per-thread scratch. */
    int threads() {
        return threads;
    }

    /** Ranges split across the pool so far: the synchronisation points of the calling thread. */
    long splits() {
        return splits;
    }

    /** Helper tasks started so far (each wakes a parked pool worker, tens of microseconds). */
    long wakes() {
        return wakes;
    }

    /**
     * Nanoseconds the caller has waited so far, over all split ranges, for parts that helpers had
     * claimed and not finished when the caller found no part left: the time a range's threads do
     * not end together (uneven parts, a helper descheduled or late).
     */
    long waitNanos() {
        return waitNanos;
    }

    /** Parts of all split ranges so far. */
    long parts() {
        return parts;
    }

    /** Parts the caller ran itself, of {@link #parts()}: the rest ran on helpers. */
    long callerParts() {
        return callerParts;
    }

    /**
     * Runs {@code task} over {@code 0..items-1} in parts whose boundaries are multiples of
     * {@code align} (so that matmul tiles are not cut), across the pool when {@code work}
     * (multiply-adds) is at least the threshold ({@link #MIN_PARALLEL_WORK} by default), in
     * {@code min(units, PARTS_PER_THREAD per thread, max(threads, work / minPartWork))} parts. Returns when every
     * part is done; rethrows the first failure of any part.
     */
    void forRange(int items, int align, long work, RangeTask task) {
        int units = (items + align - 1) / align;
        int parts = (int) Math.min(units, Math.min(threads * partsPerThread, Math.max(threads, work / minPartWork)));
        if (threads == 1 || work < minWork || parts < 2) {
            task.run(0, 0, items);
            return;
        }
        Job job = new Job(task, items, align, units, parts, guided);
        splits++;
        this.parts += parts;
        current = job;
        for (int h = 1; h < threads; h++) {
            if (state.get(h) == PARKED && state.compareAndSet(h, PARKED, SPINNING)) {
                wakes++;
                start(h);
            }
        }
        callerParts += job.work(0);
        if (job.done.get() < parts) {
            long t0 = System.nanoTime();
            for (int spins = 0; job.done.get() < parts; spins++) {
                if (spins < CALLER_SPINS) {
                    Thread.onSpinWait();
                } else {
                    Thread.yield();   // a helper is finishing a part; give it the CPU if it shares ours
                }
            }
            waitNanos += System.nanoTime() - t0;
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

    private void start(int helper) {
        try {
            pool.execute(() -> helperLoop(helper));
        } catch (RejectedExecutionException e) {
            state.set(helper, PARKED);   // a pool shut down: the caller does every part itself
        }
    }

    /** Takes every new range until none has come for {@link #SPIN_NANOS}, then parks (returns). */
    private void helperLoop(int helper) {
        Job seen = null;
        long idleSince = System.nanoTime();
        while (true) {
            Job job = current;
            if (job != seen) {
                seen = job;
                job.work(helper);
                idleSince = System.nanoTime();
            } else if (System.nanoTime() - idleSince < spinNanos) {
                Thread.onSpinWait();
            } else {
                state.set(helper, PARKED);
                // A range published between the read above and the store: take it if no caller
                // has started another task for this slot meanwhile (else that task takes it).
                if (current == seen || !state.compareAndSet(helper, PARKED, SPINNING)) {
                    return;
                }
            }
        }
    }

    /**
     * First unit of part {@code p} of {@code parts} (p = parts: {@code units}): equal parts, or
     * shrinking ones ({@code units - floor(units (parts-p)^2 / parts^2)}; a part may be empty when
     * there are few units).
     */
    static int partStart(int units, int parts, int p, boolean guided) {
        if (!guided) {
            return (int) ((long) units * p / parts);
        }
        long left = parts - p;
        return units - (int) (units * left * left / ((long) parts * parts));
    }

    /** One range cut into parts, each claimed by whoever comes first. */
    private static final class Job {
        final RangeTask task;
        final int items, align, units, parts;
        final boolean guided;
        final AtomicInteger next = new AtomicInteger();
        final AtomicInteger done = new AtomicInteger();
        volatile Throwable failure;

        Job(RangeTask task, int items, int align, int units, int parts, boolean guided) {
            this.task = task;
            this.items = items;
            this.align = align;
            this.units = units;
            this.parts = parts;
            this.guided = guided;
        }

        /** Runs parts until none is left to claim; returns how many this thread ran. */
        int work(int worker) {
            int p;
            int ran = 0;
            while ((p = next.getAndIncrement()) < parts) {
                int from = partStart(units, parts, p, guided) * align;
                int to = Math.min(items, partStart(units, parts, p + 1, guided) * align);
                try {
                    if (from < to) {
                        task.run(worker, from, to);
                    }
                } catch (Throwable t) {
                    failure = t;
                } finally {
                    done.incrementAndGet();
                }
                ran++;
            }
            return ran;
        }
    }
}

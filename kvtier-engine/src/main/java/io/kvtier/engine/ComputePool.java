package io.kvtier.engine;

import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinWorkerThread;
import java.util.concurrent.atomic.AtomicInteger;

/** The model runner's dedicated compute pool, sized to the cores, with daemon threads. */
public final class ComputePool {

    private ComputePool() {
    }

    /** The threads a pool of {@code threads} runs on: {@code threads}, or one per available core for 0. */
    public static int threads(int threads) {
        return threads > 0 ? threads : Runtime.getRuntime().availableProcessors();
    }

    /**
     * A new pool of {@code threads} workers (0 = one per available core), a worker started: a
     * pool starts worker threads on demand, at its first task, and that first range (in the first
     * step, a prompt's prefill) would wait for the thread's start; the engine is built before the
     * run. (One worker at least: the pool may run the no-op tasks it is given here on one.)
     *
     * @param onStart run by each worker thread when it starts, before any task (the kernels'
     *                {@link io.kvtier.model.Kernels#prepareThread})
     */
    public static ForkJoinPool create(int threads, Runnable onStart) {
        int n = threads(threads);
        AtomicInteger seq = new AtomicInteger();
        ForkJoinPool pool = new ForkJoinPool(n, p -> {
            ForkJoinWorkerThread t = new Worker(p, onStart);
            t.setName("kvtier-compute-" + seq.getAndIncrement());
            t.setDaemon(true);
            return t;
        }, null, false);
        for (int i = 1; i < n; i++) {   // the caller is the range's first thread (Parallel)
            pool.execute(() -> { });
        }
        return pool;
    }

    private static final class Worker extends ForkJoinWorkerThread {
        private final Runnable onStart;

        Worker(ForkJoinPool pool, Runnable onStart) {
            super(null, pool, true);   // thread-locals kept across tasks: the kernels' scratch is made once
            this.onStart = onStart;
        }

        @Override
        protected void onStart() {
            super.onStart();
            onStart.run();
        }
    }
}

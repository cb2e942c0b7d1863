package io.kvtier.engine;

import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinWorkerThread;
import java.util.concurrent.atomic.AtomicInteger;

/** The model runner's dedicated compute pool, sized to the cores, with daemon threads. */
public final class ComputePool {

    private ComputePool() {
    }

    /**
     * A new pool of {@code threads} workers (0 = one per available core), its helpers started: a
     * pool starts a worker thread at its first task, and that first range (in the first step, a
     * prompt's prefill) would wait for the thread's start; the engine is built before the run.
     */
    public static ForkJoinPool create(int threads) {
        int n = threads > 0 ? threads : Runtime.getRuntime().availableProcessors();
        AtomicInteger seq = new AtomicInteger();
        ForkJoinPool pool = new ForkJoinPool(n, p -> {
            ForkJoinWorkerThread t = ForkJoinPool.defaultForkJoinWorkerThreadFactory.newThread(p);
            t.setName("kvtier-compute-" + seq.getAndIncrement());
            t.setDaemon(true);
            return t;
        }, null, false);
        for (int i = 1; i < n; i++) {   // the caller is the range's first thread (Parallel)
            pool.execute(() -> { });
        }
        return pool;
    }
}

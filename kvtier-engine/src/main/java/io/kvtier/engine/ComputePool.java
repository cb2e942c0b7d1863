package io.kvtier.engine;

import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinWorkerThread;
import java.util.concurrent.atomic.AtomicInteger;

/** The model runner's dedicated compute pool, sized to the cores, with daemon threads. */
public final class ComputePool {

    private ComputePool() {
    }

    /** A new pool of {@code threads} workers (0 = one per available core). */
    public static ForkJoinPool create(int threads) {
        int n = threads > 0 ? threads : Runtime.getRuntime().availableProcessors();
        AtomicInteger seq = new AtomicInteger();
        return new ForkJoinPool(n, pool -> {
            ForkJoinWorkerThread t = ForkJoinPool.defaultForkJoinWorkerThreadFactory.newThread(pool);
            t.setName("kvtier-compute-" + seq.getAndIncrement());
            t.setDaemon(true);
            return t;
        }, null, false);
    }
}

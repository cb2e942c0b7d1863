package io.kvtier.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ComputePoolTest {

    @Test
    void eachWorkerRunsTheStartHookBeforeAnyTaskAndTheHelpersAreStartedWithThePool() throws Exception {
        Set<Thread> started = ConcurrentHashMap.newKeySet();
        ForkJoinPool pool = ComputePool.create(3, () -> started.add(Thread.currentThread()));
        try {
            // At least the two helpers (the caller is a range's third thread) are started when the
            // pool is built; the pool may start a worker per unit of parallelism.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (started.size() < 2 && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            assertThat(started).hasSizeBetween(2, 3);
            assertThat(started).allSatisfy(t -> assertThat(t.getName()).startsWith("kvtier-compute-"));
            assertThat(started).allSatisfy(t -> assertThat(t.isDaemon()).isTrue());
            // A task runs on a worker whose hook has run.
            Thread ran = pool.submit(Thread::currentThread).get(10, TimeUnit.SECONDS);
            assertThat(started).contains(ran);
        } finally {
            pool.shutdownNow();
        }
    }
}

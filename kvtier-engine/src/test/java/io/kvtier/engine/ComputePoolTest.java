package io.kvtier.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ComputePoolTest {

    @Test
    void aWorkerIsStartedWithThePoolAndEveryWorkerRunsTheStartHookBeforeAnyTask() throws Exception {
        Set<Thread> started = ConcurrentHashMap.newKeySet();
        ForkJoinPool pool = ComputePool.create(3, () -> started.add(Thread.currentThread()));
        try {
            // The pool starts workers on demand; building it hands it no-op tasks, so one starts at once
            // (not in the first split range), more as ranges need them.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (started.isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            assertThat(started).hasSizeBetween(1, 3);
            assertThat(started).allSatisfy(t -> assertThat(t.getName()).startsWith("kvtier-compute-"));
            assertThat(started).allSatisfy(t -> assertThat(t.isDaemon()).isTrue());
            // Whichever worker runs a task (one already started, or one started for it) ran the hook first.
            for (int i = 0; i < 20; i++) {
                Thread ran = pool.submit(Thread::currentThread).get(10, TimeUnit.SECONDS);
                assertThat(started).contains(ran);
            }
        } finally {
            pool.shutdownNow();
        }
    }
}

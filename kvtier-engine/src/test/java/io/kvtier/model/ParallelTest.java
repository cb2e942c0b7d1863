package io.kvtier.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class ParallelTest {

    @ParameterizedTest(name = "{0} threads, {1} items, align {2}, shrinking parts {3}")
    @CsvSource({"1, 100, 4, true", "2, 1, 4, true", "2, 7, 4, true", "2, 288, 4, true", "2, 32000, 4, true",
            "3, 101, 4, true", "4, 1000, 1, true", "4, 5, 1, true", "2, 6, 1, true", "2, 288, 4, false",
            "3, 101, 4, false", "4, 5, 1, false"})
    void runsEveryItemOnceInPartsAlignedToTheTile(int threads, int items, int align, boolean guided) {
        ForkJoinPool pool = new ForkJoinPool(threads);
        try {
            Parallel parallel = new Parallel(pool, Parallel.SPIN_NANOS, Parallel.MIN_PARALLEL_WORK, guided,
                    Parallel.PARTS_PER_THREAD);
            for (int round = 0; round < 50; round++) {   // helpers spinning from the round before take parts too
                AtomicIntegerArray runs = new AtomicIntegerArray(items);
                AtomicIntegerArray badPart = new AtomicIntegerArray(1);
                parallel.forRange(items, align, Long.MAX_VALUE, (worker, from, to) -> {
                    if (from % align != 0 || (to % align != 0 && to != items) || worker < 0 || worker >= threads) {
                        badPart.incrementAndGet(0);
                    }
                    for (int i = from; i < to; i++) {
                        runs.incrementAndGet(i);
                    }
                });
                for (int i = 0; i < items; i++) {
                    assertThat(runs.get(i)).as("round %d, item %d", round, i).isEqualTo(1);
                }
                assertThat(badPart.get(0)).as("parts off the tile or with a worker index out of range").isZero();
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * A range gets a part per {@link Parallel#MIN_PART_WORK_DEFAULT} multiply-adds, at least one
     * per thread and at most {@code partsPerThread} per thread (2 threads here; the default is 2).
     */
    @ParameterizedTest(name = "{0} multiply-adds, at most {1} per thread: {2} parts")
    @CsvSource({"70000, 4, 2", "524287, 4, 2", "786432, 4, 3", "1048576, 4, 4", "1900000, 4, 7", "100000000, 4, 8",
            "786432, 2, 3", "1900000, 2, 4", "100000000, 2, 4", "100000000, 1, 2"})
    void aRangeGetsAPartPerMinPartWorkBetweenOneAndPartsPerThread(long work, int partsPerThread, int parts) {
        ForkJoinPool pool = new ForkJoinPool(2);
        try {
            Parallel parallel = new Parallel(pool, Parallel.SPIN_NANOS, Parallel.MIN_PARALLEL_WORK_DEFAULT, false,
                    partsPerThread, Parallel.MIN_PART_WORK_DEFAULT);
            AtomicIntegerArray runs = new AtomicIntegerArray(1000);
            parallel.forRange(1000, 1, work, (worker, from, to) -> {
                for (int i = from; i < to; i++) {
                    runs.incrementAndGet(i);
                }
            });
            assertThat(parallel.parts()).isEqualTo(parts);
            for (int i = 0; i < 1000; i++) {
                assertThat(runs.get(i)).as("item %d", i).isEqualTo(1);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * A helper must come to every range, whether it was still spinning after the range before
     * (no gap) or had parked (a gap of several spin periods): the caller's first part waits until
     * a helper has run some part of the same range (5 s cap, which only a lost wake-up reaches).
     */
    @ParameterizedTest(name = "gap {0} us")
    @ValueSource(longs = {0, 1, 20, 200})   // the default spin is 50 us
    void aHelperJoinsEveryRangeAfterAnyGap(long gapMicros) {
        ForkJoinPool pool = new ForkJoinPool(2);
        try {
            Parallel parallel = new Parallel(pool);
            for (int round = 0; round < 40; round++) {
                AtomicBoolean helped = new AtomicBoolean();
                AtomicBoolean waitedOut = new AtomicBoolean();
                AtomicBoolean callerWaited = new AtomicBoolean();
                parallel.forRange(64, 4, Long.MAX_VALUE, (worker, from, to) -> {
                    if (worker != 0) {
                        helped.set(true);
                    } else if (callerWaited.compareAndSet(false, true)) {
                        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                        while (!helped.get() && System.nanoTime() < deadline) {
                            Thread.onSpinWait();
                        }
                        waitedOut.set(!helped.get());
                    }
                });
                assertThat(waitedOut.get()).as("round %d: no helper came within 5 s", round).isFalse();
                assertThat(helped.get()).as("round %d", round).isTrue();
                if (gapMicros > 0) {
                    LockSupport.parkNanos(gapMicros * 1000);
                }
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @ParameterizedTest(name = "{0} threads")
    @ValueSource(ints = {1, 2, 3})
    void aFailingPartIsRethrownAfterTheOthersAndLaterRangesStillRun(int threads) {
        ForkJoinPool pool = new ForkJoinPool(threads);
        try {
            Parallel parallel = new Parallel(pool);
            AtomicIntegerArray runs = new AtomicIntegerArray(40);
            assertThatThrownBy(() -> parallel.forRange(40, 4, Long.MAX_VALUE, (worker, from, to) -> {
                for (int i = from; i < to; i++) {
                    runs.incrementAndGet(i);
                }
                if (from == 0) {
                    throw new IllegalStateException("part 0 failed");
                }
            })).isInstanceOf(IllegalStateException.class).hasMessage("part 0 failed");
            for (int i = 0; i < 40; i++) {
                assertThat(runs.get(i)).as("item %d", i).isEqualTo(1);
            }
            int[] sum = new int[1];
            parallel.forRange(40, 4, Long.MAX_VALUE, (worker, from, to) -> {
                synchronized (sum) {
                    sum[0] += to - from;
                }
            });
            assertThat(sum[0]).isEqualTo(40);
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Shrinking parts: part p of P starts at units - floor(units (P-p)^2 / P^2), so 8 parts of
     * 8,000 units are 15, 13, ..., 1 sixty-fourths of the range; equal parts are 1,000 each. Every
     * cut covers 0..units in order, with empty parts only when there are fewer units than parts.
     */
    @org.junit.jupiter.api.Test
    void partsShrinkTowardsTheEndOfTheRange() {
        int[] guided = new int[9];
        int[] equal = new int[9];
        for (int p = 0; p <= 8; p++) {
            guided[p] = Parallel.partStart(8000, 8, p, true);
            equal[p] = Parallel.partStart(8000, 8, p, false);
        }
        assertThat(guided).containsExactly(0, 1875, 3500, 4875, 6000, 6875, 7500, 7875, 8000);
        assertThat(equal).containsExactly(0, 1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000);
        for (int units : new int[] {1, 2, 6, 12, 72, 1000, 8000}) {
            for (int parts : new int[] {2, 8, 12, 16}) {
                for (boolean g : new boolean[] {true, false}) {
                    assertThat(Parallel.partStart(units, parts, 0, g)).isZero();
                    assertThat(Parallel.partStart(units, parts, parts, g)).isEqualTo(units);
                    for (int p = 0; p < parts; p++) {
                        int size = Parallel.partStart(units, parts, p + 1, g) - Parallel.partStart(units, parts, p, g);
                        assertThat(size).as("units %d, parts %d, part %d, guided %b", units, parts, p, g)
                                .isBetween(units >= parts ? (g ? 0 : 1) : 0, units);
                    }
                }
            }
        }
    }

    /**
     * The counters of split ranges: every part is counted, the caller's own among them, and the
     * caller's wait for a helper's unfinished part: here the helper's first part sleeps 200 ms
     * while the caller has only empty parts left, so the caller waits for most of it.
     */
    @org.junit.jupiter.api.Test
    void countsPartsTheCallersShareAndItsWaitForHelpers() throws Exception {
        ForkJoinPool pool = new ForkJoinPool(2);
        try {
            Parallel parallel = new Parallel(pool);
            // A loaded machine can deschedule the caller for the whole sleep (then the helper does
            // every part and nobody waits): up to 5 tries for one where the caller waited.
            int rounds = 0;
            while (rounds < 5 && parallel.waitNanos() < TimeUnit.MILLISECONDS.toNanos(1)) {
                rounds++;
                AtomicBoolean helperStarted = new AtomicBoolean();
                parallel.forRange(64, 4, Long.MAX_VALUE, (worker, from, to) -> {
                    if (worker != 0 && helperStarted.compareAndSet(false, true)) {
                        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(200));
                    } else if (worker == 0 && from == 0) {
                        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                        while (!helperStarted.get() && System.nanoTime() < deadline) {
                            Thread.onSpinWait();
                        }
                    }
                });
                assertThat(helperStarted.get()).isTrue();
            }
            assertThat(parallel.waitNanos()).isGreaterThan(TimeUnit.MILLISECONDS.toNanos(1));
            assertThat(parallel.splits()).isEqualTo(rounds);
            long parts = 2L * Parallel.PARTS_PER_THREAD;   // 16 groups of 4, cut for each of 2 threads
            assertThat(parallel.parts()).isEqualTo(parts * rounds);
            assertThat(parallel.callerParts()).isBetween(1L, parts * rounds - 1);

            ForkJoinPool dead = new ForkJoinPool(2);
            dead.shutdownNow();
            Parallel alone = new Parallel(dead);
            alone.forRange(64, 4, Long.MAX_VALUE, (worker, from, to) -> { });
            assertThat(alone.parts()).isEqualTo(parts);
            assertThat(alone.callerParts()).isEqualTo(parts);
            assertThat(alone.waitNanos()).isZero();
        } finally {
            pool.shutdownNow();
        }
    }

    @ParameterizedTest(name = "work {0} below the threshold")
    @ValueSource(longs = {1, Parallel.MIN_PARALLEL_WORK_DEFAULT})
    void smallRangesStayOnTheCallerInOnePart(long below) {
        ForkJoinPool pool = new ForkJoinPool(2);
        long work = Parallel.MIN_PARALLEL_WORK - below;
        try {
            Thread caller = Thread.currentThread();
            int[] calls = new int[1];
            new Parallel(pool).forRange(1000, 4, work, (worker, from, to) -> {
                assertThat(Thread.currentThread()).isSameAs(caller);
                assertThat(worker).isZero();
                assertThat(from).isZero();
                assertThat(to).isEqualTo(1000);
                calls[0]++;
            });
            assertThat(calls[0]).isEqualTo(1);
        } finally {
            pool.shutdownNow();
        }
    }

    @org.junit.jupiter.api.Test
    void aShutDownPoolLeavesEveryPartToTheCaller() {
        ForkJoinPool pool = new ForkJoinPool(2);
        Parallel parallel = new Parallel(pool);
        pool.shutdownNow();
        AtomicIntegerArray runs = new AtomicIntegerArray(100);
        for (int round = 0; round < 3; round++) {
            parallel.forRange(100, 4, Long.MAX_VALUE, (worker, from, to) -> {
                for (int i = from; i < to; i++) {
                    runs.incrementAndGet(i);
                }
            });
        }
        for (int i = 0; i < 100; i++) {
            assertThat(runs.get(i)).isEqualTo(3);
        }
    }
}

package io.kvtier.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class JitWarmUpTest {

    /** Compilation-time readings in turn, the last repeated: a fake of the JVM's counter. */
    private static java.util.function.LongSupplier readings(long... ms) {
        AtomicInteger i = new AtomicInteger();
        return () -> ms[Math.min(i.getAndIncrement(), ms.length - 1)];
    }

    @Test
    void runsUntilOneWholeRunCompiledNothing() {
        AtomicInteger runs = new AtomicInteger();
        // Readings before run 1 and after runs 1, 2, 3: 0, 5, 9, 9 -> run 3 compiled nothing.
        JitWarmUp.Result r = new JitWarmUp(0, Long.MAX_VALUE, 0, readings(0, 5, 9, 9, 12)).run(runs::incrementAndGet);
        assertThat(runs.get()).isEqualTo(3);
        assertThat(r.quiet()).isTrue();
        assertThat(r.describe()).doesNotContain("still compiling");
    }

    @Test
    void stopsAtTheMostWhileStillCompiling() {
        AtomicInteger runs = new AtomicInteger();
        JitWarmUp.Result r = new JitWarmUp(0, 0, 0, readings(0, 5, 9)).run(runs::incrementAndGet);
        assertThat(runs.get()).isEqualTo(1);
        assertThat(r.quiet()).isFalse();
        assertThat(r.describe()).endsWith(", still compiling");
    }

    @Test
    void runsAtLeastTheLeastEvenWhenQuiet() {
        AtomicInteger runs = new AtomicInteger();
        long least = 30_000_000L;
        long t0 = System.nanoTime();
        JitWarmUp.Result r = new JitWarmUp(least, Long.MAX_VALUE, 0, readings(7)).run(runs::incrementAndGet);
        assertThat(System.nanoTime() - t0).isGreaterThanOrEqualTo(least);
        assertThat(runs.get()).isGreaterThan(1);
        assertThat(r.quiet()).isTrue();
    }

    @Test
    void aJvmWithoutCompilationTimeGetsTheLeastAndCountsAsQuiet() {
        AtomicInteger runs = new AtomicInteger();
        JitWarmUp.Result r = new JitWarmUp(0, Long.MAX_VALUE, 0, () -> -1).run(runs::incrementAndGet);
        assertThat(runs.get()).isEqualTo(1);
        assertThat(r.quiet()).isTrue();
    }

    @Test
    void endsOnlyAfterTheQuietTimeOfWholeRunsWithoutCompilation() {
        AtomicInteger runs = new AtomicInteger();
        long quiet = 30_000_000L;
        // compiles during runs 1 and 2, then never: the quiet time starts at the end of run 2
        JitWarmUp.Result r = new JitWarmUp(0, Long.MAX_VALUE, quiet, readings(0, 1, 2)).run(() -> {
            runs.incrementAndGet();
            java.util.concurrent.locks.LockSupport.parkNanos(5_000_000L);
        });
        // at least one whole run after the last compilation, and 30 ms of them after run 2's end
        assertThat(runs.get()).isGreaterThanOrEqualTo(3);
        assertThat(r.quiet()).isTrue();
        assertThat(r.seconds()).isGreaterThanOrEqualTo(0.03 + 0.005 * 2);
    }

    /** This JVM's schedule of choice: a most of 0 is one run, whatever the compilers do; a most below the least is refused. */
    @Test
    void thisJvmsWarmUpKeepsItsSchedule() {
        AtomicInteger runs = new AtomicInteger();
        JitWarmUp.ofThisJvm(0, 0, 0).run(runs::incrementAndGet);
        assertThat(runs.get()).isEqualTo(1);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> JitWarmUp.ofThisJvm(2, 1, 0))
                .isInstanceOf(IllegalArgumentException.class);
    }
}

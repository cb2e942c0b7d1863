package io.kvtier.tier.remote;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The tier's breaker state as stats and metrics report it, from its nodes' breakers. */
class BreakerStateTest {

    private static final long PERIOD = 1_000;

    private static CircuitBreaker openedAt(long t) {
        CircuitBreaker b = new CircuitBreaker(1, PERIOD);
        b.failure(t);
        return b;
    }

    /**
     * A half-open breaker (its open period over, no success since) is neither closed (a dead store
     * must not show as healthy between two failed trials) nor open: a dashboard read an idle
     * engine's breaker, whose store had come back, as a store still down.
     */
    @Test
    void aHalfOpenBreakerIsReportedHalfOpen() {
        CircuitBreaker b = openedAt(0);
        assertThat(CircuitBreaker.stateOf(List.of(b), 10)).isEqualTo("open");
        assertThat(b.allows(PERIOD + 1)).as("half-open: a trial may go").isTrue();
        assertThat(CircuitBreaker.stateOf(List.of(b), PERIOD + 1)).as("no success since it opened").isEqualTo("half_open");
        b.success(PERIOD + 1);
        assertThat(CircuitBreaker.stateOf(List.of(b), PERIOD + 2)).isEqualTo("closed");
    }

    @Test
    void someNodesOpenIsPartial() {
        CircuitBreaker closed = new CircuitBreaker(1, PERIOD);
        assertThat(CircuitBreaker.stateOf(List.of(closed, openedAt(0)), 5 * PERIOD)).isEqualTo("partial");
        assertThat(CircuitBreaker.stateOf(List.of(closed, openedAt(0)), 10)).isEqualTo("partial");
        assertThat(CircuitBreaker.stateOf(List.of(closed, new CircuitBreaker(3, PERIOD)), 0)).isEqualTo("closed");
    }

    @Test
    void noNodeClosedIsOpenOnlyWhileEveryOneIs() {
        CircuitBreaker early = openedAt(0);
        CircuitBreaker late = openedAt(PERIOD / 2);
        assertThat(CircuitBreaker.stateOf(List.of(early, late), PERIOD - 1)).isEqualTo("open");
        assertThat(CircuitBreaker.stateOf(List.of(early, late), PERIOD)).as("early's trial may go").isEqualTo("half_open");
        assertThat(CircuitBreaker.stateOf(List.of(early, late), 2 * PERIOD)).isEqualTo("half_open");
    }

    /** The owner hears of each opening, and of each failed trial's re-opening, to schedule its own trial then. */
    @Test
    void theOwnerHearsOfEachOpeningAndReopening() {
        List<CircuitBreaker> heard = new java.util.ArrayList<>();
        CircuitBreaker b = new CircuitBreaker(2, PERIOD, heard::add);
        b.failure(0);
        assertThat(heard).as("one failure of two").isEmpty();
        assertThat(b.untilTrial(0)).as("closed").isZero();
        b.failure(10);
        assertThat(heard).containsExactly(b);
        assertThat(b.untilTrial(10)).isEqualTo(PERIOD);
        assertThat(b.untilTrial(PERIOD / 2)).isEqualTo(PERIOD / 2 + 10);
        b.failure(20); // an operation sent before it opened, failing while open: no new period
        assertThat(heard).hasSize(1);
        assertThat(b.untilTrial(PERIOD + 10)).as("half-open").isZero();
        b.failure(PERIOD + 10); // the trial failed: open again for a period
        assertThat(heard).hasSize(2);
        assertThat(b.untilTrial(PERIOD + 10)).isEqualTo(PERIOD);
        assertThat(b.opens()).as("a failed trial is no new opening").isEqualTo(1);
        b.success(2 * PERIOD);
        b.trip(3 * PERIOD);
        assertThat(heard).hasSize(3);
        b.trip(3 * PERIOD + 1);
        assertThat(heard).as("tripping an open breaker does nothing").hasSize(3);
    }

    /**
     * The owner's PING: a closed breaker gets one when it has seen no success for the quiet period
     * (an idle engine's store may have died unseen), a half-open one as its trial; one at a time,
     * and while a half-open breaker's is out no operation goes (to a frozen node each would wait
     * for its timeout).
     */
    @Test
    void theOwnersPingGoesToAQuietOrHalfOpenBreakerOneAtATime() {
        long quiet = PERIOD;
        CircuitBreaker b = new CircuitBreaker(2, PERIOD);
        assertThat(b.untilQuietPing(0, quiet)).as("never succeeded: due now").isZero();
        b.success(10);
        assertThat(b.untilQuietPing(10 + quiet / 4, quiet)).isEqualTo(3 * quiet / 4);
        assertThat(b.startPing(10 + quiet / 4, quiet)).as("an operation succeeded lately").isFalse();
        assertThat(b.startPing(10 + quiet, quiet)).isTrue();
        assertThat(b.startPing(10 + quiet, quiet)).as("one is out").isFalse();
        assertThat(b.allows(10 + quiet)).as("closed: operations go beside it").isTrue();
        b.failure(20 + quiet); // it failed: closed still (one failure of two), so another may go at once
        b.pingDone();
        assertThat(b.startPing(20 + quiet, quiet)).isTrue();
        b.failure(30 + quiet);
        b.pingDone();
        assertThat(b.state(30 + quiet)).isEqualTo(CircuitBreaker.State.OPEN);
        assertThat(b.startPing(40 + quiet, quiet)).as("open: its trial waits for the period's end").isFalse();
        assertThat(b.untilQuietPing(40 + quiet, quiet)).isEqualTo(quiet);

        long halfOpen = 30 + quiet + PERIOD;
        assertThat(b.allows(halfOpen)).as("half-open, no trial out: an operation may be the trial").isTrue();
        assertThat(b.startPing(halfOpen, quiet)).isTrue();
        assertThat(b.allows(halfOpen)).as("the PING is the trial").isFalse();
        assertThat(b.state(halfOpen)).isEqualTo(CircuitBreaker.State.HALF_OPEN);
        b.success(halfOpen + 1);
        b.pingDone();
        assertThat(b.allows(halfOpen + 1)).isTrue();
        assertThat(b.untilQuietPing(halfOpen + 1, quiet)).isEqualTo(quiet);
    }

    /** trial 10 #3: a failed-over master gets no command, so its open breaker must not count for ever. */
    @Test
    void onlyTheNodesServingSlotsCount() {
        java.util.Map<String, CircuitBreaker> breakers = new java.util.LinkedHashMap<>();
        breakers.put("old-master", openedAt(0));
        breakers.put("promoted", new CircuitBreaker(1, PERIOD));
        assertThat(CircuitBreaker.stateOf(CircuitBreaker.current(breakers, n -> true), 5 * PERIOD)).isEqualTo("partial");
        assertThat(CircuitBreaker.stateOf(CircuitBreaker.current(breakers, n -> n.equals("promoted")), 5 * PERIOD))
                .isEqualTo("closed");
        assertThat(CircuitBreaker.current(breakers, n -> n.equals("old-master"))).containsExactly(breakers.get("old-master"));
    }
}

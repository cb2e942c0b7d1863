package io.kvtier.replay.sim;

/**
 * Simulated time of a replay, in nanoseconds from the start of the trace. Only moves forward:
 * the simulated model runner advances it by the cost of each forward pass, the simulated transfer
 * engine when the engine waits for a transfer, the replay driver to the next arrival. Engine
 * thread only.
 */
public final class VirtualClock {

    private long now;

    /** Current simulated time, nanoseconds. */
    public long nanoTime() {
        return now;
    }

    /** Moves the clock forward by {@code nanos} (>= 0). */
    public void advanceBy(long nanos) {
        if (nanos < 0) {
            throw new IllegalArgumentException("the clock cannot go back: " + nanos + " ns");
        }
        now = after(now, nanos);
    }

    /**
     * {@code t + nanos} (both >= 0).
     *
     * @throws ClockOverflowException where the sum would pass the clock's range; a cost rounded from
     *                                a double too large for a long ({@link Long#MAX_VALUE}) always does
     */
    public static long after(long t, long nanos) {
        if (nanos >= Long.MAX_VALUE - t) {
            throw new ClockOverflowException();
        }
        return t + nanos;
    }

    /** Moves the clock to {@code nanos} if that is later than now; never moves it back. */
    public void advanceTo(long nanos) {
        now = Math.max(now, nanos);
    }

    @Override
    public String toString() {
        return String.format("VirtualClock[%.6f s]", now / 1e9);
    }
}

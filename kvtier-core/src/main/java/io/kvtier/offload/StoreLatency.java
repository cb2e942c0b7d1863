package io.kvtier.offload;

/**
 * Back-pressure on a tier whose stores stay slow: an exponentially weighted average of its write
 * jobs' latency (from the transfer thread's start of the job to its last answer), and the rule that new writes are
 * dropped while that average is above {@code slowNanos}, except one trial write when none is in
 * flight (so the average learns when the tier has recovered). Dropping is never waiting: the
 * engine's steps go on, the chunk stays in the host tier and is written later if it is stored
 * again. Engine thread only.
 */
final class StoreLatency {

    /** Weight of the newest sample: a few slow jobs in a row mark the tier slow, one does not. */
    static final double WEIGHT = 0.3;

    private final long slowNanos;
    private double averageNanos = -1;

    /** @param slowNanos average write latency above which writes are dropped (> 0) */
    StoreLatency(long slowNanos) {
        if (slowNanos <= 0) {
            throw new IllegalArgumentException("slow-store latency must be positive, got " + slowNanos);
        }
        this.slowNanos = slowNanos;
    }

    /** A write job ended after {@code nanos} (a failed or timed-out one too: its time was spent). */
    void sample(long nanos) {
        averageNanos = averageNanos < 0 ? nanos : WEIGHT * nanos + (1 - WEIGHT) * averageNanos;
    }

    /** Whether a new write may start, with {@code writesInFlight} write jobs still running. */
    boolean admits(int writesInFlight) {
        return !slow() || writesInFlight == 0;
    }

    boolean slow() {
        return averageNanos > slowNanos;
    }

    /** The average write latency in nanoseconds, or -1 before the first write ended. */
    long averageNanos() {
        return (long) averageNanos;
    }
}

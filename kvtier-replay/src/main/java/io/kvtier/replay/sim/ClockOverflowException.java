package io.kvtier.replay.sim;

/**
 * Simulated time beyond the {@link VirtualClock}'s range (2^63 ns, about 292 years): a cost
 * model's figures too large for the trace (a step or a transfer job that would never end). Thrown
 * instead of letting a sum wrap around, which made such a job end before it started (a remote link
 * of 1e-300 GB/s served its hits at once).
 */
public final class ClockOverflowException extends RuntimeException {

    public ClockOverflowException() {
        super("the simulated time passed the simulator's clock (2^63 ns, about 292 years)");
    }
}

package io.kvtier.offload;

/**
 * The engine's load at a load-or-recompute decision ({@link LoadCosts}): recomputing a hit takes
 * GPU time from every request whose first token still waits on the engine's steps, while a load
 * runs beside them on the copy lane.
 *
 * @param waitingForFirstToken other requests whose first token is not computed yet (waiting,
 *                             being loaded, or running their prefill); each is delayed by the
 *                             recompute's step time
 * @param engineBusy           other requests are running, so a load that ends mid-step waits for
 *                             the step's end before its request runs
 * @param stepTokens           the step token budget ({@code --max-batch-tokens}): a recompute of
 *                             {@code n} tokens adds {@code n / stepTokens} steps' fixed cost
 */
public record Contention(int waitingForFirstToken, boolean engineBusy, int stepTokens) {

    /** An engine running nothing else. */
    public static Contention idle(int stepTokens) {
        return new Contention(0, false, stepTokens);
    }

    public Contention {
        if (waitingForFirstToken < 0 || stepTokens < 1) {
            throw new IllegalArgumentException("waiting " + waitingForFirstToken + ", step tokens " + stepTokens);
        }
    }
}

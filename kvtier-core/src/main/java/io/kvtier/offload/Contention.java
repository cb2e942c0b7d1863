package io.kvtier.offload;

/**
 * The engine's load at a load-or-recompute decision ({@link LoadCosts}): recomputing a hit takes
 * GPU time from every request whose first token still waits on the engine's steps, while a load
 * runs beside them on the copy lane but parks the request's device blocks until it ends.
 *
 * @param waitingForFirstToken other requests whose first token is not computed yet (waiting,
 *                             being loaded, or running their prefill); each is delayed by the
 *                             recompute's step time
 * @param engineBusy           other requests are running, so a load that ends mid-step waits for
 *                             the step's end before its request runs
 * @param stepTokens           the step token budget ({@code --max-batch-tokens}): a recompute of
 *                             {@code n} tokens adds {@code n / stepTokens} steps' fixed cost
 * @param freeBlocks           device blocks the allocator can hand out now, before this request is
 *                             admitted (free and cached-but-unreferenced ones); {@link Integer#MAX_VALUE}
 *                             when memory is not a limit
 */
public record Contention(int waitingForFirstToken, boolean engineBusy, int stepTokens, int freeBlocks) {

    /** An engine running nothing else, with memory to spare. */
    public static Contention idle(int stepTokens) {
        return new Contention(0, false, stepTokens, Integer.MAX_VALUE);
    }

    public Contention {
        if (waitingForFirstToken < 0 || stepTokens < 1 || freeBlocks < 0) {
            throw new IllegalArgumentException("waiting " + waitingForFirstToken + ", step tokens " + stepTokens + ", free blocks " + freeBlocks);
        }
    }
}

package io.kvtier.engine;

/**
 * Counters of one engine, updated by the engine thread. Tokens are token positions, not bytes.
 */
public final class EngineStats {

    long requests;
    long finished;
    long promptTokens;
    long generatedTokens;
    long deviceHitTokens;
    long preemptions;
    long steps;
    long computedTokens;
    long forwardNanos;
    final long[] finishedBy = new long[FinishReason.values().length];
    long queriedTokens;
    long externalQueriedTokens;
    long externalHitTokens;
    final java.util.Map<String, Long> externalHitTokensByTier = new java.util.TreeMap<>();

    /** Finished requests that stopped for {@code reason}. */
    public long finished(FinishReason reason) {
        return finishedBy[reason.ordinal()];
    }

    /**
     * Prompt tokens of finished requests: what the device prefix cache was asked for. Counted at
     * finish, like {@link #deviceHitTokens()}, so that hits never run ahead of queries.
     */
    public long queriedTokens() {
        return queriedTokens;
    }

    /**
     * Prompt tokens of finished requests that the device prefix cache did not hold, with offloading
     * on: what the offload tiers were asked for (counted at finish).
     */
    public long externalQueriedTokens() {
        return externalQueriedTokens;
    }

    /**
     * Prompt tokens finished requests loaded from offload tiers at their first admission (what
     * each request reports as its external hit, and a client sees in {@code cached_tokens}).
     * Reloads after preemptions are no hits: they are in the offload stats' blocks and bytes loaded.
     */
    public long externalHitTokens() {
        return externalHitTokens;
    }

    /** {@link #externalHitTokens()} per tier the hit came from ({@code host}, {@code disk}, {@code remote}). */
    public java.util.Map<String, Long> externalHitTokensByTier() {
        return java.util.Collections.unmodifiableSortedMap(new java.util.TreeMap<>(externalHitTokensByTier));
    }

    public long requests() {
        return requests;
    }

    public long finished() {
        return finished;
    }

    public long promptTokens() {
        return promptTokens;
    }

    public long generatedTokens() {
        return generatedTokens;
    }

    public long deviceHitTokens() {
        return deviceHitTokens;
    }

    public long preemptions() {
        return preemptions;
    }

    public long steps() {
        return steps;
    }

    /** Token positions whose KV the model computed (prefill and decode, recomputation included). */
    public long computedTokens() {
        return computedTokens;
    }

    /** Time spent in the model runner's forward passes. */
    public long forwardNanos() {
        return forwardNanos;
    }
}

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

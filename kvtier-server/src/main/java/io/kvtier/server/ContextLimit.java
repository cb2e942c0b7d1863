package io.kvtier.server;

import io.kvtier.text.Plural;

/**
 * How many token positions one request can use: the model's context, or less when the device pool
 * is smaller (a request must fit the pool alone, or it would preempt itself forever). The server
 * checks requests against it, and reports it as {@code max_model_len}, as vLLM reports the length
 * its KV cache can hold.
 *
 * @param modelContext the model's context in token positions
 * @param poolBlocks   blocks of the device pool (KV group 0's)
 * @param blockSize    token positions per block
 */
public record ContextLimit(int modelContext, int poolBlocks, int blockSize) {

    /** Positions one request can hold: prompt + completion − 1 (the last token sampled needs no KV). */
    public int positions() {
        return (int) Math.min(modelContext, (long) poolBlocks * blockSize);
    }

    /** Whether the device pool, not the model's context, sets {@link #positions()}. */
    public boolean poolBound() {
        return positions() < modelContext;
    }

    /** "what the device pool holds for one request (12 blocks of 16)" */
    String pool() {
        return "what the device pool holds for one request (" + Plural.count(poolBlocks, "block") + " of " + blockSize + ")";
    }

    /**
     * The start of the context-length message: OpenAI's "This model's maximum context length is
     * N tokens" when the model sets the limit, else what sets it.
     */
    String maximum() {
        return poolBound()
                ? "This server's maximum context length is " + positions() + " tokens (" + pool()
                        + "; the model's context is " + modelContext + ")"
                : "This model's maximum context length is " + modelContext + " tokens";
    }

    /**
     * The line {@code serve} prints at start when the pool sets the limit, else null.
     */
    public String startNote() {
        return poolBound()
                ? "a request can use at most " + positions() + " token positions (prompt + max_tokens - 1), " + pool()
                        + "; the model's context is " + modelContext + " (/v1/models says max_model_len " + positions() + ")"
                : null;
    }
}

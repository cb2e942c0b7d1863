package io.kvtier.server;

import io.kvtier.engine.SamplingParams;
import io.kvtier.engine.StopCondition;
import java.util.Objects;

/**
 * What a front end asks the engine loop to generate: immutable, built on an I/O thread.
 *
 * @param promptIds prompt token ids, BOS first where the model has one (at least one token)
 * @param maxTokens most new tokens (at least 1); the model's context also stops generation
 * @param sampling  temperature, top-p and seed
 * @param cacheSalt tenant salt mixed into every block key (vLLM's {@code cache_salt}), or null;
 *                  never empty (an empty salt would share the unsalted blocks)
 * @param stop      checked by the engine after each generated token (e.g. {@link StopStrings});
 *                  {@link StopCondition#NONE} for none. Used on the engine thread only
 */
public record GenerationRequest(int[] promptIds, int maxTokens, SamplingParams sampling, String cacheSalt, StopCondition stop) {

    /** A request without a stop condition. */
    public GenerationRequest(int[] promptIds, int maxTokens, SamplingParams sampling, String cacheSalt) {
        this(promptIds, maxTokens, sampling, cacheSalt, StopCondition.NONE);
    }

    public GenerationRequest {
        if (promptIds.length == 0) {
            throw new IllegalArgumentException("empty prompt: a request needs at least one token");
        }
        if (cacheSalt != null && cacheSalt.isEmpty()) {
            throw new IllegalArgumentException("an empty cache salt: give null for none");
        }
        if (maxTokens < 1) {
            throw new IllegalArgumentException("max tokens must be at least 1, got " + maxTokens);
        }
        Objects.requireNonNull(stop, "stop");
        promptIds = promptIds.clone();
    }
}

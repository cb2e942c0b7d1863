package io.kvtier.server;

import io.kvtier.engine.SamplingParams;

/**
 * What a front end asks the engine loop to generate: immutable, built on an I/O thread.
 *
 * @param promptIds prompt token ids, BOS first (at least one token)
 * @param maxTokens most new tokens (at least 1); the model's context also stops generation
 * @param sampling  temperature, top-p and seed
 * @param cacheSalt tenant salt mixed into every block key (vLLM's {@code cache_salt}), or null
 */
public record GenerationRequest(int[] promptIds, int maxTokens, SamplingParams sampling, String cacheSalt) {

    public GenerationRequest {
        if (promptIds.length == 0) {
            throw new IllegalArgumentException("empty prompt (a prompt has at least BOS)");
        }
        if (maxTokens < 1) {
            throw new IllegalArgumentException("max tokens must be at least 1, got " + maxTokens);
        }
        promptIds = promptIds.clone();
    }
}

package io.kvtier.server;

import io.kvtier.engine.FinishReason;

/**
 * How a request ended, with OpenAI's usage counts.
 *
 * @param reason           stop (the model's stop token), length (max tokens or context) or abort
 * @param promptTokens     prompt tokens (BOS included)
 * @param completionTokens generated tokens (the stop token not counted)
 * @param cachedTokens     prompt tokens not computed: device prefix-cache hits plus tokens loaded
 *                         from the offload tiers, at the request's first admission (a re-admission
 *                         after a preemption reloads its own KV: no cache hit of the prompt)
 */
public record Outcome(FinishReason reason, int promptTokens, int completionTokens, int cachedTokens) {
}

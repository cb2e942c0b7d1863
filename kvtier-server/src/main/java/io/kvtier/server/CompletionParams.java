package io.kvtier.server;

import io.kvtier.engine.SamplingParams;
import io.kvtier.engine.StopCondition;
import java.util.List;

/**
 * A validated completion or chat request.
 *
 * @param chat         true for {@code /v1/chat/completions}
 * @param promptIds    the prompt's token ids, BOS first for text prompts
 * @param maxTokens    most new tokens: the request's value capped to the room left in the
 *                     context, or that room when absent
 * @param sampling     temperature, top-p, seed
 * @param stop         stop strings (none empty; at most 4); their text is not returned
 * @param stream       server-sent events instead of one JSON body
 * @param includeUsage with {@code stream}: a final chunk with {@code usage}
 * @param user         the caller's {@code user} field, or null
 * @param cacheSalt    vLLM's {@code cache_salt}, or null
 * @param returnTokenIds vLLM's {@code return_token_ids}: add {@code prompt_token_ids} and each
 *                     choice's {@code token_ids} to the response
 */
record CompletionParams(boolean chat, int[] promptIds, int maxTokens, SamplingParams sampling, List<String> stop,
                        boolean stream, boolean includeUsage, String user, String cacheSalt, boolean returnTokenIds) {

    /** The engine's request; its stop strings are matched on the engine thread (see {@link StopStrings}). */
    GenerationRequest generation(ModelText model) {
        return new GenerationRequest(promptIds, maxTokens, sampling, cacheSalt,
                stop.isEmpty() ? StopCondition.NONE : new StopStrings(model, stop, promptIds[promptIds.length - 1]));
    }
}

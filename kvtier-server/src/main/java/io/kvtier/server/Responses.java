package io.kvtier.server;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The JSON shapes of OpenAI's completion and chat completion responses and stream chunks, for one
 * request ({@code id}, {@code created} and {@code model} are fixed at its start).
 */
final class Responses {

    private final boolean chat;
    private final String id;
    private final long created;
    private final String model;

    Responses(boolean chat, String id, String model) {
        this.chat = chat;
        this.id = id;
        this.created = System.currentTimeMillis() / 1000;
        this.model = model;
    }

    private ObjectNode head(String object) {
        ObjectNode o = Json.object();
        o.put("id", id);
        o.put("object", object);
        o.put("created", created);
        o.put("model", model);
        return o;
    }

    /** The whole (non-streamed) response. */
    ObjectNode full(String text, String finishReason, Usage usage, int[] promptIds, int[] outputIds) {
        ObjectNode o = head(chat ? "chat.completion" : "text_completion");
        ObjectNode c = o.putArray("choices").addObject();
        c.put("index", 0);
        if (chat) {
            ObjectNode m = c.putObject("message");
            m.put("role", "assistant");
            m.put("content", text);
        } else {
            c.put("text", text);
        }
        c.putNull("logprobs");
        c.put("finish_reason", finishReason);
        if (outputIds != null) {
            ints(c.putArray("token_ids"), outputIds);
            promptIds(o, c, promptIds);
        }
        o.set("usage", usage.json());
        return o;
    }

    /**
     * {@code prompt_token_ids} where vLLM puts them: a chat response's at its top level, a
     * completion's in its choice (vLLM's {@code CompletionResponseChoice} and stream choice).
     */
    private void promptIds(ObjectNode response, ObjectNode choice, int[] promptIds) {
        ints((chat ? response : choice).putArray("prompt_token_ids"), promptIds);
    }

    /**
     * A stream chunk with one choice; {@code role} only in a chat's first chunk; finishReason null
     * until the last; {@code promptIds} (with {@code return_token_ids}) only in the stream's first
     * chunk, as vLLM sends them, else null.
     */
    ObjectNode chunk(String text, boolean role, String finishReason, int[] ids, int[] promptIds) {
        ObjectNode o = head(chat ? "chat.completion.chunk" : "text_completion");
        ObjectNode c = o.putArray("choices").addObject();
        c.put("index", 0);
        if (chat) {
            ObjectNode d = c.putObject("delta");
            if (role) {
                d.put("role", "assistant");
            }
            if (text != null) {
                d.put("content", text);
            }
        } else {
            c.put("text", text == null ? "" : text);
        }
        c.putNull("logprobs");
        c.put("finish_reason", finishReason);
        if (promptIds != null) {
            promptIds(o, c, promptIds);
        }
        if (ids != null) {
            ints(c.putArray("token_ids"), ids);
        }
        return o;
    }

    /** The final chunk of {@code stream_options.include_usage}: no choices, the usage. */
    ObjectNode usageChunk(Usage usage) {
        ObjectNode o = head(chat ? "chat.completion.chunk" : "text_completion");
        o.putArray("choices");
        o.set("usage", usage.json());
        return o;
    }

    private static void ints(ArrayNode a, int[] ids) {
        for (int id : ids) {
            a.add(id);
        }
    }

    /** OpenAI's usage with {@code prompt_tokens_details.cached_tokens} = device + external hit tokens. */
    record Usage(int promptTokens, int completionTokens, int cachedTokens) {
        ObjectNode json() {
            ObjectNode u = Json.object();
            u.put("prompt_tokens", promptTokens);
            u.put("completion_tokens", completionTokens);
            u.put("total_tokens", promptTokens + completionTokens);
            u.putObject("prompt_tokens_details").put("cached_tokens", cachedTokens);
            return u;
        }
    }
}

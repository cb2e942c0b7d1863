package io.kvtier.server;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;

/**
 * A parsed server-sent event stream as a test sees it: the {@code data:} JSON objects in order,
 * whether {@code data: [DONE]} came last, and any {@code event: error} payload.
 */
record SseStream(List<JsonNode> chunks, boolean done, JsonNode error, List<String> rawLines) {

    static SseStream parse(List<String> lines) {
        List<JsonNode> chunks = new ArrayList<>();
        boolean done = false;
        JsonNode error = null;
        String event = null;
        for (String line : lines) {
            if (line.startsWith("event: ")) {
                event = line.substring(7);
            } else if (line.startsWith("data: ")) {
                String data = line.substring(6);
                if (data.equals("[DONE]")) {
                    done = true;
                } else if ("error".equals(event)) {
                    error = ServerFixture.json(data);
                } else {
                    chunks.add(ServerFixture.json(data));
                }
            } else if (line.isEmpty()) {
                event = null;
            }
        }
        return new SseStream(chunks, done, error, lines);
    }

    /** The concatenated text of every chunk (completion {@code text} or chat {@code delta.content}). */
    String text() {
        StringBuilder sb = new StringBuilder();
        for (JsonNode c : chunks) {
            for (JsonNode ch : c.path("choices")) {
                sb.append(ch.has("delta") ? ch.path("delta").path("content").asText("") : ch.path("text").asText(""));
            }
        }
        return sb.toString();
    }

    /** Every chunk's {@code token_ids} (with {@code return_token_ids}). */
    int[] tokenIds() {
        List<Integer> ids = new ArrayList<>();
        for (JsonNode c : chunks) {
            for (JsonNode ch : c.path("choices")) {
                ch.path("token_ids").forEach(t -> ids.add(t.asInt()));
            }
        }
        return ids.stream().mapToInt(Integer::intValue).toArray();
    }

    /** The finish reason of the last chunk that has choices. */
    String finishReason() {
        String reason = null;
        for (JsonNode c : chunks) {
            for (JsonNode ch : c.path("choices")) {
                if (!ch.path("finish_reason").isNull() && ch.has("finish_reason")) {
                    reason = ch.get("finish_reason").asText();
                }
            }
        }
        return reason;
    }

    /** The usage of the final {@code choices: []} chunk, or null. */
    JsonNode usage() {
        JsonNode last = chunks.isEmpty() ? null : chunks.getLast();
        return last != null && last.path("choices").isEmpty() && last.has("usage") ? last.get("usage") : null;
    }
}

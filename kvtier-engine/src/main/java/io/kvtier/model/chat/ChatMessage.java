package io.kvtier.model.chat;

import java.util.Map;
import java.util.Objects;

/**
 * One message of a conversation: {@code role} is {@code system}, {@code user} or
 * {@code assistant} (templates may accept others, such as {@code tool}); {@code content} is its
 * text; {@code fields} are the message's other fields a template may read, as plain maps, lists,
 * strings and numbers (an assistant's {@code tool_calls}, a tool reply's {@code tool_call_id}
 * and {@code name}), given to the template beside {@code role} and {@code content}, never
 * replacing them.
 */
public record ChatMessage(String role, String content, Map<String, Object> fields) {

    public ChatMessage {
        Objects.requireNonNull(role, "role");
        Objects.requireNonNull(content, "content");
        fields = Map.copyOf(fields);
    }

    /** A message with no other fields. */
    public ChatMessage(String role, String content) {
        this(role, content, Map.of());
    }

    public static ChatMessage system(String content) {
        return new ChatMessage("system", content);
    }

    public static ChatMessage user(String content) {
        return new ChatMessage("user", content);
    }

    public static ChatMessage assistant(String content) {
        return new ChatMessage("assistant", content);
    }
}

package io.kvtier.model.chat;

import java.util.Objects;

/**
 * One message of a conversation: {@code role} is {@code system}, {@code user} or
 * {@code assistant} (templates may accept others, such as {@code tool}); {@code content} is its
 * text.
 */
public record ChatMessage(String role, String content) {

    public ChatMessage {
        Objects.requireNonNull(role, "role");
        Objects.requireNonNull(content, "content");
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

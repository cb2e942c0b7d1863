package io.kvtier.server;

import java.util.List;

/**
 * Turns a chat into the prompt text the model continues. The model's own template (from its GGUF
 * metadata) when it has one, else {@link PlainChatTemplate}.
 */
public interface ChatTemplate {

    /** One chat message: role ({@code system}, {@code user}, {@code assistant}, ...) and its text. */
    record Message(String role, String content) {
    }

    /**
     * The prompt text for {@code messages}, ending where the assistant's reply begins.
     *
     * @throws IllegalArgumentException if the template cannot render these messages (a 400)
     */
    String render(List<Message> messages);
}

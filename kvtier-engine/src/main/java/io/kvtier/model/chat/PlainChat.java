package io.kvtier.model.chat;

import java.util.List;
import java.util.Locale;

/**
 * {@link ChatTemplate#PLAIN} rendered by string concatenation, to the same text Jinjava renders
 * it to: per message the role with {@code capitalize} (lower-cased, then the first code point in
 * title case), {@code ": "}, the content with {@code trim} (Java's {@link String#trim()}: every
 * character up to U+0020 off both ends) and a blank line; then {@code "Assistant:"} when a
 * generation prompt is asked. A llama2.c model's {@code --chat} thus never starts Jinjava (a
 * second or more of CPU for a few string joins).
 */
final class PlainChat {

    private PlainChat() {
    }

    /** The prompt text of {@code messages}, ending with {@code "Assistant:"} when {@code addGenerationPrompt}. */
    static String render(List<ChatMessage> messages, boolean addGenerationPrompt) {
        StringBuilder sb = new StringBuilder();
        for (ChatMessage m : messages) {
            sb.append(capitalize(m.role())).append(": ").append(m.content().trim()).append("\n\n");
        }
        if (addGenerationPrompt) {
            sb.append("Assistant:");
        }
        return sb.toString();
    }

    /** Jinja's {@code capitalize} as Jinjava does it (commons-lang's capitalize of the lower-cased text). */
    private static String capitalize(String s) {
        String lower = s.toLowerCase(Locale.ROOT);
        if (lower.isEmpty()) {
            return lower;
        }
        int first = lower.codePointAt(0);
        return new StringBuilder(lower.length()).appendCodePoint(Character.toTitleCase(first))
                .append(lower, Character.charCount(first), lower.length()).toString();
    }
}

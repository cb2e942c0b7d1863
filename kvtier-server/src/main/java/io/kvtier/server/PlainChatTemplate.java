package io.kvtier.server;

import java.util.List;
import java.util.Locale;

/**
 * The chat template for models that have none (llama2.c checkpoints such as stories260K), the
 * same text as {@code generate --chat}'s plain template: each message as
 * {@code "Role: content\n\n"} (the role capitalized, the content trimmed), then {@code "Assistant:"}.
 * For example {@code [system "Be brief.", user "Hi"]} renders
 * {@code "System: Be brief.\n\nUser: Hi\n\nAssistant:"}. The tokenizer then adds BOS, so equal
 * conversation prefixes give equal token prefixes and hit the prefix cache.
 */
public final class PlainChatTemplate implements ChatTemplate {

    @Override
    public String render(List<Message> messages) {
        StringBuilder sb = new StringBuilder();
        for (Message m : messages) {
            sb.append(capitalize(m.role())).append(": ").append(m.content().strip()).append("\n\n");
        }
        return sb.append("Assistant:").toString();
    }

    /** Jinja's {@code capitalize}: the first character upper case, the rest lower case. */
    private static String capitalize(String s) {
        return s.isEmpty() ? s : s.substring(0, 1).toUpperCase(Locale.ROOT) + s.substring(1).toLowerCase(Locale.ROOT);
    }
}

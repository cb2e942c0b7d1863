package io.kvtier.server;

import java.util.List;

/**
 * The chat template for models that have none (llama2.c checkpoints such as stories260K): each
 * message as {@code "<role>: <content>\n"}, then {@code "assistant:"}. For example
 * {@code [system "Be brief.", user "Hi"]} renders {@code "system: Be brief.\nuser: Hi\nassistant:"}.
 * The tokenizer then adds BOS (and the dummy-prefix space), so equal conversation prefixes give
 * equal token prefixes and hit the prefix cache.
 */
public final class PlainChatTemplate implements ChatTemplate {

    @Override
    public String render(List<Message> messages) {
        StringBuilder sb = new StringBuilder();
        for (Message m : messages) {
            sb.append(m.role()).append(": ").append(m.content()).append('\n');
        }
        return sb.append("assistant:").toString();
    }
}

package io.kvtier.cli;

import io.kvtier.model.Model;
import io.kvtier.model.TextTokenizer;
import io.kvtier.model.chat.ChatMessage;
import io.kvtier.model.chat.ChatTemplate;
import io.kvtier.model.chat.ChatTemplateException;
import io.kvtier.model.gguf.GgufModel;
import io.kvtier.model.tokenizer.GgufTokenizer;
import java.util.ArrayList;
import java.util.List;

/** {@code generate --chat}: each prompt is a user message rendered through the model's chat template. */
final class ChatPrompts {

    private ChatPrompts() {
    }

    /** The GGUF file's {@code tokenizer.chat_template}, else the plain template (llama2.c checkpoints, stories260K). */
    static ChatTemplate template(Model model, TextTokenizer tok) {
        if (model instanceof GgufModel g && tok instanceof GgufTokenizer t) {
            return ChatTemplate.of(g.file(), t);
        }
        return ChatTemplate.plain(tok);
    }

    /**
     * The token ids of {@code user} (after {@code system}, when given) rendered with the
     * generation prompt.
     *
     * @throws BadInputException when the template cannot be rendered or refuses the messages
     */
    static int[] encode(ChatTemplate template, TextTokenizer tok, String system, String user) {
        List<ChatMessage> messages = new ArrayList<>();
        if (system != null) {
            messages.add(ChatMessage.system(system));
        }
        messages.add(ChatMessage.user(user));
        try {
            return template.encode(tok, template.render(messages, true));
        } catch (ChatTemplateException e) {
            throw new BadInputException(e.getMessage(), e);
        }
    }
}

package io.kvtier.model.chat;

/**
 * A chat template that cannot be rendered: a syntax error or a construct the renderer lacks
 * (the model file's problem), or the template's own {@code raise_exception} refusing the
 * messages (the caller's problem). The message is one line naming the template and the reason.
 */
public class ChatTemplateException extends IllegalArgumentException {

    public ChatTemplateException(String message) {
        super(message);
    }
}

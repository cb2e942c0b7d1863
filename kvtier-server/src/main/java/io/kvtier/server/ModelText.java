package io.kvtier.server;

import io.kvtier.model.chat.ChatMessage;
import java.util.List;

/**
 * The text side of a model as the server needs it: encode, decode, and its identity. Thread-safe
 * (called from every I/O thread).
 */
public interface ModelText {

    /** The model's name in the API ({@code model} field, {@code /v1/models}). */
    String modelName();

    /** Token ids of {@code text}, BOS first (control tokens' text parsed as the tokens). */
    int[] encode(String text);

    /**
     * The prompt text of a chat, ending where the assistant's reply begins, through the model's
     * chat template.
     *
     * @throws IllegalArgumentException if the template cannot render these messages (a 400)
     */
    String renderChat(List<ChatMessage> messages);

    /** Token ids of a rendered chat (BOS added only where the template did not write it). */
    int[] encodeChat(String rendered);

    /** The bytes token {@code token} prints after {@code prevToken} (-1 at the start). */
    byte[] pieceBytes(int prevToken, int token);

    /** The text of a sequence of ids (BOS prints nothing). */
    String decode(int[] ids);

    /** Number of token ids; valid ids are 0 .. vocabSize-1. */
    int vocabSize();

    /**
     * Upper bound on the UTF-8 bytes one token covers: a text longer than context x this cannot fit
     * the context, which lets the server reject it without encoding it.
     */
    int maxBytesPerToken();
}

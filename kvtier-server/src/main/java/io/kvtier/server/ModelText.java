package io.kvtier.server;

/**
 * The text side of a model as the server needs it: encode, decode, and its identity. Thread-safe
 * (called from every I/O thread).
 */
public interface ModelText {

    /** The model's name in the API ({@code model} field, {@code /v1/models}). */
    String modelName();

    /** Token ids of {@code text}, BOS first. */
    int[] encode(String text);

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

    /** The chat template: the model's own, or {@link PlainChatTemplate}. */
    ChatTemplate chatTemplate();
}

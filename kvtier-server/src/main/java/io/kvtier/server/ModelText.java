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

    /**
     * Token ids of {@code text} (control tokens' text parsed as the tokens).
     *
     * @param addSpecial add BOS (and EOS) where the model's tokenizer says so (vLLM's
     *                   {@code add_special_tokens}); a model without BOS adds nothing either way
     */
    int[] encode(String text, boolean addSpecial);

    /**
     * The prompt text of a chat through the model's chat template.
     *
     * @param addGenerationPrompt end with the assistant's header, where its reply begins (vLLM's
     *                            {@code add_generation_prompt})
     * @throws IllegalArgumentException if the template cannot render these messages (a 400)
     */
    String renderChat(List<ChatMessage> messages, boolean addGenerationPrompt);

    /**
     * Token ids of a rendered chat, control tokens parsed.
     *
     * @param addSpecial add BOS where the model has one and the template did not write it; false:
     *                   the template's text alone
     */
    int[] encodeChat(String rendered, boolean addSpecial);

    /** The bytes token {@code token} prints after {@code prevToken} (-1 at the start). */
    byte[] pieceBytes(int prevToken, int token);

    /**
     * The text of a sequence of ids with control tokens written as their text (BOS, {@code
     * <|im_start|>}), so that encoding it parses them back: vLLM's {@code /detokenize}. Generated
     * text does not use it: it hides control tokens ({@link #pieceBytes}).
     */
    String detokenize(int[] ids);

    /** Number of token ids; valid ids are 0 .. vocabSize-1. */
    int vocabSize();

    /**
     * Upper bound on the UTF-8 bytes one token covers: a text longer than context x this cannot fit
     * the context, which lets the server reject it without encoding it.
     */
    int maxBytesPerToken();
}

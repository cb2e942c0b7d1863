package io.kvtier.model;

/**
 * Text to token ids and back, whatever the model format: llama2.c's {@link Tokenizer} and the
 * GGUF tokenizers ({@link io.kvtier.model.tokenizer.GgufTokenizer}) implement it, so the CLI,
 * engine and server pick one by model file and use it the same way.
 */
public interface TextTokenizer {

    /** Number of token ids (ids are 0..vocabSize-1). */
    int vocabSize();

    /**
     * The token ids of {@code text}.
     *
     * @param addSpecial   add BOS (and EOS) where the model's tokenizer says so
     * @param parseSpecial turn the text of control tokens (such as {@code <|eot_id|>}) into their
     *                     ids; otherwise it is tokenized as plain text (llama.cpp's
     *                     {@code parse_special}). Formats without control tokens ignore it.
     */
    int[] encode(String text, boolean addSpecial, boolean parseSpecial);

    /**
     * The bytes {@code token} adds to generated text when it follows {@code prevToken} (-1 for
     * none). Control tokens add nothing. A byte token may be part of a multi-byte character:
     * accumulate bytes before decoding them as UTF-8.
     */
    byte[] pieceBytes(int prevToken, int token);

    /** The text of a whole token sequence as the format's reference prints it (control tokens not shown). */
    String decode(int[] ids);

    /**
     * The text of ids with control tokens written as their text (such as {@code <|im_start|>}),
     * so that encoding it with parse_special gives them back: llama.cpp's {@code llama_detokenize}
     * with {@code unparse_special}, vLLM's {@code /detokenize}. A format whose encoder never parses
     * control tokens from text (llama2.c's) gives {@link #decode}.
     */
    default String decodeWithSpecial(int[] ids) {
        return decode(ids);
    }

    /** The beginning-of-sequence id, or -1 when the model has none. */
    int bosId();

    /**
     * A lower bound on the number of tokens of any text of {@code utf8Bytes} UTF-8 bytes (with BOS
     * when {@code bos}), found without tokenizing, so a caller can refuse a prompt that cannot fit
     * a context before paying for its tokenization. The default, 0, bounds nothing; a tokenizer
     * that knows its longest piece cheaply overrides it.
     */
    default long minTokens(long utf8Bytes, boolean bos) {
        return 0;
    }

    /** Ids that end generation (EOS, end-of-turn tokens), ascending; a fresh array. */
    int[] stopTokenIds();
}

package io.kvtier.server;

import io.kvtier.model.Tokenizer;

/** {@link ModelText} of a llama2.c checkpoint's tokenizer (no chat template of its own: {@link PlainChatTemplate}). */
public final class LlamaModelText implements ModelText {

    private final String name;
    private final Tokenizer tokenizer;
    private final int maxBytesPerToken;
    private final ChatTemplate template = new PlainChatTemplate();

    public LlamaModelText(String name, Tokenizer tokenizer) {
        this.name = name;
        this.tokenizer = tokenizer;
        int max = 1;
        for (int i = 0; i < tokenizer.vocabSize(); i++) {
            max = Math.max(max, tokenizer.piece(i).length);
        }
        this.maxBytesPerToken = max;
    }

    @Override
    public String modelName() {
        return name;
    }

    @Override
    public int[] encode(String text) {
        return tokenizer.encode(text, true);
    }

    @Override
    public byte[] pieceBytes(int prevToken, int token) {
        return token == Tokenizer.BOS ? new byte[0] : tokenizer.pieceBytes(prevToken, token);
    }

    @Override
    public String decode(int[] ids) {
        return tokenizer.decode(ids);
    }

    @Override
    public int vocabSize() {
        return tokenizer.vocabSize();
    }

    @Override
    public int maxBytesPerToken() {
        return maxBytesPerToken;
    }

    @Override
    public ChatTemplate chatTemplate() {
        return template;
    }
}

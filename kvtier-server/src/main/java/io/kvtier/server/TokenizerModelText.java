package io.kvtier.server;

import io.kvtier.model.TextTokenizer;
import io.kvtier.model.chat.ChatMessage;
import io.kvtier.model.chat.ChatTemplate;
import io.kvtier.model.chat.ChatTemplateException;
import java.util.List;

/**
 * {@link ModelText} of any model's tokenizer (llama2.c's, or a GGUF file's) with its chat
 * template: a GGUF file's {@code tokenizer.chat_template}, or {@link ChatTemplate#plain} for a
 * model without one (stories260K).
 */
public final class TokenizerModelText implements ModelText {

    private final String name;
    private final TextTokenizer tokenizer;
    private final ChatTemplate template;
    private final int maxBytesPerToken;

    public TokenizerModelText(String name, TextTokenizer tokenizer, ChatTemplate template) {
        this.name = name;
        this.tokenizer = tokenizer;
        this.template = template;
        int max = 1;
        for (int i = 0; i < tokenizer.vocabSize(); i++) {
            max = Math.max(max, tokenizer.pieceBytes(-1, i).length);
        }
        // +1: a SentencePiece tokenizer's dummy-prefix space is not in the first piece's bytes.
        this.maxBytesPerToken = max + 1;
    }

    /** With the plain template (a model without one of its own). */
    public static TokenizerModelText plain(String name, TextTokenizer tokenizer) {
        return new TokenizerModelText(name, tokenizer, ChatTemplate.plain(tokenizer));
    }

    @Override
    public String modelName() {
        return name;
    }

    @Override
    public int[] encode(String text, boolean addSpecial) {
        return tokenizer.encode(text, addSpecial, true);
    }

    @Override
    public String renderChat(List<ChatMessage> messages, boolean addGenerationPrompt) {
        try {
            return template.render(messages, addGenerationPrompt);
        } catch (ChatTemplateException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }

    @Override
    public int[] encodeChat(String rendered, boolean addSpecial) {
        return addSpecial ? template.encode(tokenizer, rendered) : tokenizer.encode(rendered, false, true);
    }

    /**
     * Ids that end a reply: the tokenizer's (EOS) and the template's end-of-turn tokens, ascending.
     * The same for completions and chats, so one engine serves both.
     */
    public int[] stopTokenIds() {
        return java.util.stream.IntStream.concat(java.util.Arrays.stream(tokenizer.stopTokenIds()),
                java.util.Arrays.stream(template.stopTokenIds())).distinct().sorted().toArray();
    }

    @Override
    public byte[] pieceBytes(int prevToken, int token) {
        return token == tokenizer.bosId() ? new byte[0] : tokenizer.pieceBytes(prevToken, token);
    }

    @Override
    public String detokenize(int[] ids) {
        return tokenizer.decodeWithSpecial(ids);
    }

    @Override
    public int vocabSize() {
        return tokenizer.vocabSize();
    }

    @Override
    public int maxBytesPerToken() {
        return maxBytesPerToken;
    }
}

package io.kvtier.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvtier.model.chat.ChatMessage;
import io.kvtier.model.chat.ChatReferences;
import io.kvtier.model.chat.ChatTemplate;
import io.kvtier.model.gguf.GgufFile;
import io.kvtier.model.tokenizer.GgufTokenizer;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The server's chat path on a GGUF model's own template: the Qwen2.5 template of the gguf-ref
 * qwen2 model renders the reference chat to llama.cpp's exact prompt ids (one BOS-free prompt,
 * as Qwen's template writes its own markers), and a reply stops at {@code <|im_end|>} as well as EOS.
 */
class TokenizerModelTextTest {

    private static final Path MODEL = ChatReferences.ref("qwen2-bpe-q8_0.gguf");

    @Test
    void aGgufChatRendersToLlamaCppsIdsAndStopsAtTheEndOfTurn() throws IOException {
        JsonNode chat = ChatReferences.chat("qwen2-bpe-q8_0.ref.jsonl");
        try (GgufFile f = GgufFile.open(MODEL)) {
            GgufTokenizer tok = GgufTokenizer.of(f);
            TokenizerModelText text = new TokenizerModelText("qwen2", tok, ChatTemplate.of(f, tok));
            String rendered = text.renderChat(List.of(
                    ChatMessage.system("You are a helpful assistant."),
                    ChatMessage.user("Write one short sentence about the sea.")), true);
            assertThat(rendered).isEqualTo(chat.get("prompt_text").asText());
            int[] expected = ChatReferences.ints(chat.get("prompt_ids"));
            assertThat(text.encodeChat(rendered, true)).containsExactly(expected);
            int imEnd = tok.encode("<|im_end|>", false, true)[0];
            assertThat(text.stopTokenIds()).contains(imEnd);
        }
    }
}

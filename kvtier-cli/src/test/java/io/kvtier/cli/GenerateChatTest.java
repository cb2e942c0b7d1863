package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvtier.engine.ReferenceRecords;
import io.kvtier.model.Tokenizer;
import io.kvtier.model.chat.ChatReferences;
import io.kvtier.model.gguf.GgufFile;
import io.kvtier.model.tokenizer.GgufTokenizer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** {@code ./kvtier generate --chat}: prompts are user messages rendered through the model's chat template. */
class GenerateChatTest {

    private static final ObjectMapper JSON = new ObjectMapper();




    /**
     * Llama 3.2's template (its own date, since the reference fixed 26 Jul 2024, is replaced by
     * today's: compare the ids around it) gives llama.cpp's prompt ids; Qwen2.5's gives them
     * exactly, and the reply is llama.cpp's greedy tokens up to a stop token.
     */
    @Test
    void chatPromptsAreTheTemplatesIds() throws IOException {
        JsonNode qwen = ChatReferences.chat("qwen2-bpe-q8_0.ref.jsonl");
        CliRun r = CliRun.of("generate", "--model", ChatReferences.ref("qwen2-bpe-q8_0.gguf").toString(), "--chat",
                "--system", "You are a helpful assistant.", "--prompt", "Write one short sentence about the sea.",
                "--max-tokens", "8", "--output", "jsonl", "--device-blocks", "16");
        assertThat(r.code()).as(r.err()).isZero();
        JsonNode o = JSON.readTree(r.out().lines().findFirst().orElseThrow());
        assertThat(ChatReferences.ints(o.get("prompt_ids"))).containsExactly(ChatReferences.ints(qwen.get("prompt_ids")));
        int[] generated = ChatReferences.ints(o.get("generated_ids"));
        assertThat(ChatReferences.ints(qwen.get("generated_ids"))).startsWith(generated);
        assertThat(o.get("finish_reason").asText()).isEqualTo(generated.length < 8 ? "stop" : "length");

        JsonNode llama = ChatReferences.chat("llama3-bpe-q8_0.ref.jsonl");
        CliRun l = CliRun.of("generate", "--model", ChatReferences.ref("llama3-bpe-q8_0.gguf").toString(), "--chat",
                "--system", "You are a helpful assistant.", "--prompt", "Write one short sentence about the sea.",
                "--max-tokens", "1", "--output", "jsonl", "--device-blocks", "16");
        assertThat(l.code()).as(l.err()).isZero();
        int[] got = ChatReferences.ints(JSON.readTree(l.out().lines().findFirst().orElseThrow()).get("prompt_ids"));
        int[] want = ChatReferences.ints(llama.get("prompt_ids"));
        // One BOS (the template writes it), then the system header up to "Today Date:" as in the reference.
        assertThat(got[0]).isEqualTo(128_000);
        assertThat(Arrays.stream(got).filter(t -> t == 128_000).count()).isEqualTo(1);
        int header = 14;
        assertThat(Arrays.copyOf(got, header)).containsExactly(Arrays.copyOf(want, header));
        assertThat(Arrays.copyOfRange(got, got.length - 20, got.length))
                .containsExactly(Arrays.copyOfRange(want, want.length - 20, want.length));
    }

    /** A llama2.c model has no template: the plain one, tokenized with BOS as usual. */
    @Test
    void plainTemplateForALlama2cCheckpoint() throws IOException {
        CliRun r = CliRun.of("generate", "--model", ReferenceRecords.model().toString(), "--tokenizer",
                ReferenceRecords.tokenizer().toString(), "--chat", "--prompt", "Once upon a time", "--max-tokens", "4",
                "--device-blocks", "16", "--host-cache-bytes", "0", "--output", "jsonl");
        assertThat(r.code()).as(r.err()).isZero();
        int[] expected = Tokenizer.load(ReferenceRecords.tokenizer(), 512).encode("User: Once upon a time\n\nAssistant:", true);
        assertThat(ChatReferences.ints(JSON.readTree(r.out().lines().findFirst().orElseThrow()).get("prompt_ids"))).containsExactly(expected);
    }

    @Test
    void badChatInputGivesOneLineAndExitTwo() {
        CliRun sys = CliRun.of("generate", "--system", "x", "--prompt", "y");
        assertThat(sys.code()).isEqualTo(2);
        assertThat(sys.err().strip()).isEqualTo("kvtier: --system needs --chat");
    }

    /** Qwen3's template renders (it once failed): the chat prompt is llama.cpp's ids. */
    @Test
    void qwen3ChatPromptIsTheReferencesIds() throws IOException {
        JsonNode ref = ChatReferences.chat("qwen3-bpe-f16.ref.jsonl");
        CliRun r = CliRun.of("generate", "--model", ChatReferences.ref("qwen3-bpe-f16.gguf").toString(), "--chat",
                "--system", "You are a helpful assistant.", "--prompt", "Write one short sentence about the sea.",
                "--max-tokens", "1", "--output", "jsonl", "--device-blocks", "16");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(ChatReferences.ints(JSON.readTree(r.out().lines().findFirst().orElseThrow()).get("prompt_ids")))
                .containsExactly(ChatReferences.ints(ref.get("prompt_ids")));
    }

    /**
     * Text output of a chat is the reply alone: the generated pieces (each after its predecessor,
     * the first after the prompt's last token), not the rendered template.
     */
    @Test
    void chatTextOutputIsTheReplyAlone() throws IOException {
        String model = ChatReferences.ref("qwen2-bpe-q8_0.gguf").toString();
        String[] common = {"generate", "--model", model, "--chat", "--system", "You are a helpful assistant.",
                "--prompt", "Write one short sentence about the sea.", "--max-tokens", "6", "--device-blocks", "16"};
        CliRun json = CliRun.of(concat(common, "--output", "jsonl"));
        assertThat(json.code()).as(json.err()).isZero();
        JsonNode o = JSON.readTree(json.out().lines().findFirst().orElseThrow());
        int[] prompt = ChatReferences.ints(o.get("prompt_ids"));
        int[] generated = ChatReferences.ints(o.get("generated_ids"));
        assertThat(generated).isNotEmpty();
        String reply;
        try (GgufFile f = GgufFile.open(Path.of(model))) {
            GgufTokenizer tok = GgufTokenizer.of(f);
            java.io.ByteArrayOutputStream b = new java.io.ByteArrayOutputStream();
            int prev = prompt[prompt.length - 1];
            for (int id : generated) {
                b.writeBytes(tok.pieceBytes(prev, id));
                prev = id;
            }
            reply = b.toString(java.nio.charset.StandardCharsets.UTF_8);
        }
        assertThat(o.get("text").asText()).isEqualTo(reply);
        CliRun text = CliRun.of(concat(common, "--output", "text"));
        assertThat(text.code()).as(text.err()).isZero();
        assertThat(text.out()).isEqualTo(reply + System.lineSeparator()).doesNotContain("helpful assistant", "sea.");
    }

    private static String[] concat(String[] a, String... b) {
        String[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}

package io.kvtier.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvtier.model.chat.ChatMessage;
import io.kvtier.model.chat.ChatReferences;
import io.kvtier.model.chat.ChatTemplate;
import io.kvtier.model.gguf.GgufFile;
import io.kvtier.model.tokenizer.GgufTokenizer;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The prompt fields of {@code /tokenize}, {@code /detokenize} and the completion routes, as vLLM
 * treats them, on real GGUF tokenizers: qwen2 (byte-level BPE, no BOS, control tokens) and the
 * SentencePiece llama-spm512 (BOS). Each case once went wrong in a user's trial: control tokens
 * dropped by /detokenize, /tokenize refusing a prompt over the context, add_special_tokens and
 * add_generation_prompt ignored, an empty prompt's error naming max_tokens and claiming a BOS
 * the model lacks, an empty cache_salt taken as no salt.
 */
class PromptFieldsTest {

    /** A context shorter than the test prompts, so that the limit shows. */
    private static final int CONTEXT = 8;
    private static GgufFile qwenFile;
    private static GgufFile spmFile;
    private static TokenizerModelText qwen;
    private static TokenizerModelText spm;
    private static GgufTokenizer spmTok;

    @BeforeAll
    static void open() {
        qwenFile = GgufFile.open(ChatReferences.ref("qwen2-bpe-q8_0.gguf"));
        GgufTokenizer q = GgufTokenizer.of(qwenFile);
        qwen = new TokenizerModelText("qwen2", q, ChatTemplate.of(qwenFile, q));
        spmFile = GgufFile.open(ChatReferences.ref("llama-spm512-f32.gguf"));
        spmTok = GgufTokenizer.of(spmFile);
        spm = new TokenizerModelText("spm", spmTok, ChatTemplate.of(spmFile, spmTok));
    }

    @AfterAll
    static void close() {
        qwenFile.close();
        spmFile.close();
    }

    private static JsonNode body(String json) {
        return ServerFixture.json(json);
    }

    private static ApiError refusal(ThrowingCall call) {
        try {
            call.run();
        } catch (ApiError e) {
            return e;
        }
        throw new AssertionError("expected a 400");
    }

    private interface ThrowingCall {
        void run() throws ApiError;
    }

    /** trial26: text parts were glued ("HelloWorld"); vLLM joins them with a newline. */
    @Test
    void textPartsAreJoinedByANewline() throws ApiError {
        RequestParser parser = new RequestParser(spm, new ContextLimit(512, 512, 1));
        int[] parts = parser.tokenize(body("{\"messages\": [{\"role\": \"user\", \"content\": [{\"type\": \"text\", \"text\": \"Hello\"},"
                + " {\"type\": \"text\", \"text\": \"World\"}]}]}"));
        int[] joined = parser.tokenize(body("{\"messages\": [{\"role\": \"user\", \"content\": \"Hello\\nWorld\"}]}"));
        assertThat(parts).containsExactly(joined);
        int[] glued = parser.tokenize(body("{\"messages\": [{\"role\": \"user\", \"content\": \"HelloWorld\"}]}"));
        assertThat(parts).isNotEqualTo(glued);
        int[] one = parser.tokenize(body("{\"messages\": [{\"role\": \"user\", \"content\": [{\"type\": \"text\", \"text\": \"Hello\"}]}]}"));
        assertThat(one).containsExactly(parser.tokenize(body("{\"messages\": [{\"role\": \"user\", \"content\": \"Hello\"}]}")));
    }

    /**
     * {@code max_completion_tokens} caps both routes and wins over {@code max_tokens} (as vLLM);
     * a trial found the completions route ignoring it and running to the end of the context.
     */
    @Test
    void maxCompletionTokensCapsBothRoutes() throws ApiError {
        RequestParser parser = new RequestParser(qwen, new ContextLimit(4096, 4096, 1));
        String msgs = "\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]";
        assertThat(parser.parse(body("{\"prompt\": \"hi\", \"max_completion_tokens\": 3}"), false).maxTokens()).isEqualTo(3);
        assertThat(parser.parse(body("{\"prompt\": \"hi\", \"max_completion_tokens\": 3, \"max_tokens\": 5}"), false).maxTokens())
                .isEqualTo(3);
        assertThat(parser.parse(body("{" + msgs + ", \"max_completion_tokens\": 3, \"max_tokens\": 5}"), true).maxTokens())
                .isEqualTo(3);
        assertThat(parser.parse(body("{\"prompt\": \"hi\", \"max_tokens\": 5}"), false).maxTokens()).isEqualTo(5);
        ApiError e = refusal(() -> parser.parse(body("{\"prompt\": \"hi\", \"max_completion_tokens\": 0}"), false));
        assertThat(e.param()).isEqualTo("max_completion_tokens");
    }

    @Test
    void detokenizeKeepsControlTokensAndInvertsTokenize() throws ApiError {
        assertThat(qwen.detokenize(new int[] {151644, 872})).isEqualTo("<|im_start|>user");
        String chat = "<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n";
        int[] ids = new RequestParser(qwen, new ContextLimit(4096, 4096, 1)).tokenize(body("{\"prompt\": " + Json.MAPPER.valueToTree(chat) + "}"));
        assertThat(ids).startsWith(151644, 872);
        assertThat(qwen.detokenize(ids)).isEqualTo(chat);
        // Generated text still hides them (as vLLM's default skip_special_tokens does).
        TextStreamer text = new TextStreamer(qwen, List.of(), -1);
        assertThat(text.accept(new int[] {151644, 872}) + text.finish()).isEqualTo("user");
    }

    @Test
    void tokenizeCountsAPromptOverTheContextWhileCompletionsRefuseIt() throws ApiError {
        RequestParser parser = new RequestParser(qwen, new ContextLimit(CONTEXT, CONTEXT, 1));
        String longText = "one two three four five six seven eight nine ten eleven twelve";
        int[] want = qwen.encode(longText, true);
        assertThat(want.length).isGreaterThan(CONTEXT);
        assertThat(parser.tokenize(body("{\"prompt\": \"" + longText + "\"}"))).containsExactly(want);
        ApiError e = refusal(() -> parser.parse(body("{\"prompt\": \"" + longText + "\"}"), false));
        assertThat(e.code()).isEqualTo("context_length_exceeded");
        assertThat(e.param()).isEqualTo("prompt");
    }

    /** trial33: "your messages has 4817 bytes": the verb agrees with the parameter's name. */
    @Test
    void aChatLongerThanTheContextCanHoldIsRefusedInWordsThatAgree() {
        RequestParser parser = new RequestParser(spm, new ContextLimit(CONTEXT, CONTEXT, 1));
        String content = "a".repeat(100_000);
        ApiError chat = refusal(() -> parser.parse(body("{\"messages\": [{\"role\": \"user\", \"content\": \"" + content + "\"}]}"), true));
        assertThat(chat.code()).isEqualTo("context_length_exceeded");
        assertThat(chat.getMessage()).contains("However, your messages have ").doesNotContain("messages has");
        ApiError prompt = refusal(() -> parser.parse(body("{\"prompt\": \"" + content + "\"}"), false));
        assertThat(prompt.getMessage()).contains("However, your prompt has 100000 bytes");
    }

    @Test
    void addSpecialTokensDecidesBos() throws ApiError {
        RequestParser parser = new RequestParser(spm, new ContextLimit(512, 512, 1));
        int bos = spmTok.bosId();
        assertThat(bos).isNotNegative();
        int[] with = parser.tokenize(body("{\"prompt\": \"Once upon a time\"}"));
        int[] without = parser.tokenize(body("{\"prompt\": \"Once upon a time\", \"add_special_tokens\": false}"));
        assertThat(with[0]).isEqualTo(bos);
        assertThat(without).containsExactly(Arrays.copyOfRange(with, 1, with.length));
        assertThat(parser.parse(body("{\"prompt\": \"Once upon a time\", \"add_special_tokens\": false}"), false).promptIds())
                .containsExactly(without);
        assertThat(parser.parse(body("{\"prompt\": \"Once upon a time\"}"), false).promptIds()).containsExactly(with);
        // A rendered chat: BOS added unless add_special_tokens is false.
        String msgs = "\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}]";
        int[] chat = parser.tokenize(body("{" + msgs + "}"));
        int[] chatBare = parser.tokenize(body("{" + msgs + ", \"add_special_tokens\": false}"));
        assertThat(chat[0]).isEqualTo(bos);
        assertThat(chatBare).isNotEmpty().doesNotContain(bos);
        assertThatThrownBy(() -> parser.tokenize(body("{\"prompt\": \"a\", \"add_special_tokens\": 1}")))
                .isInstanceOf(ApiError.class).hasMessageContaining("add_special_tokens must be true or false");
    }

    @Test
    void addGenerationPromptDecidesTheAssistantHeader() throws ApiError {
        RequestParser parser = new RequestParser(qwen, new ContextLimit(4096, 4096, 1));
        String msgs = "\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}]";
        List<ChatMessage> list = List.of(ChatMessage.user("Hi"));
        int[] open = parser.tokenize(body("{" + msgs + "}"));
        int[] closed = parser.tokenize(body("{" + msgs + ", \"add_generation_prompt\": false}"));
        assertThat(qwen.detokenize(open)).endsWith("<|im_start|>assistant\n");
        assertThat(qwen.detokenize(closed)).endsWith("Hi<|im_end|>\n");
        assertThat(closed).containsExactly(qwen.encodeChat(qwen.renderChat(list, false), true));
        assertThat(parser.parse(body("{" + msgs + ", \"add_generation_prompt\": false}"), true).promptIds())
                .containsExactly(closed);
    }

    @Test
    void anEmptyPromptWithoutBosNamesThePromptAndTheReason() throws ApiError {
        ApiError qwenEmpty = refusal(() -> new RequestParser(qwen, new ContextLimit(4096, 4096, 1)).parse(body("{\"prompt\": \"\"}"), false));
        assertThat(qwenEmpty.param()).isEqualTo("prompt");
        assertThat(qwenEmpty.getMessage()).contains("this model adds no BOS token").doesNotContain("at least BOS");
        assertThat(refusal(() -> new RequestParser(qwen, new ContextLimit(4096, 4096, 1)).tokenize(body("{\"prompt\": \"\"}"))).param())
                .isEqualTo("prompt");
        RequestParser spmParser = new RequestParser(spm, new ContextLimit(512, 512, 1));
        assertThat(spmParser.parse(body("{\"prompt\": \"\"}"), false).promptIds()).containsExactly(spmTok.bosId());
        ApiError bare = refusal(() -> spmParser.parse(body("{\"prompt\": \"\", \"add_special_tokens\": false}"), false));
        assertThat(bare.param()).isEqualTo("prompt");
        assertThat(bare.getMessage()).contains("add_special_tokens is false");
    }

    @Test
    void anEmptyCacheSaltIsRefusedAsVllmRefusesIt() throws ApiError {
        RequestParser parser = new RequestParser(qwen, new ContextLimit(4096, 4096, 1));
        ApiError e = refusal(() -> parser.parse(body("{\"prompt\": \"Hi\", \"cache_salt\": \"\"}"), false));
        assertThat(e.param()).isEqualTo("cache_salt");
        assertThat(e.getMessage()).isEqualTo("Parameter 'cache_salt' must be a non-empty string if provided.");
        assertThat(parser.parse(body("{\"prompt\": \"Hi\", \"cache_salt\": \"t1\"}"), false).cacheSalt()).isEqualTo("t1");
    }

    @Test
    void outputChangingFieldsAreHonouredOrRefusedNeverIgnored() throws ApiError {
        RequestParser parser = new RequestParser(qwen, new ContextLimit(4096, 4096, 1));
        String[][] asked = {{"presence_penalty", "0.5"}, {"frequency_penalty", "-1"}, {"repetition_penalty", "1.2"},
            {"top_k", "5"}, {"min_p", "0.1"}, {"min_tokens", "3"}, {"ignore_eos", "true"}, {"stop_token_ids", "[13]"},
            {"include_stop_str_in_output", "true"}, {"skip_special_tokens", "false"}, {"prompt_logprobs", "1"},
            {"continue_final_message", "true"}, {"chat_template", "\"{{ 1 }}\""}, {"chat_template_kwargs", "{\"a\": 1}"}};
        for (String[] f : asked) {
            ApiError e = refusal(() -> parser.parse(body("{\"prompt\": \"Hi\", \"" + f[0] + "\": " + f[1] + "}"), false));
            assertThat(e.param()).as(f[0]).isEqualTo(f[0]);
        }
        String[][] off = {{"presence_penalty", "0"}, {"frequency_penalty", "0.0"}, {"repetition_penalty", "1"},
            {"top_k", "-1"}, {"top_k", "0"}, {"min_p", "0"}, {"min_tokens", "0"}, {"ignore_eos", "false"},
            {"stop_token_ids", "[]"}, {"include_stop_str_in_output", "false"}, {"skip_special_tokens", "true"},
            {"continue_final_message", "false"}, {"chat_template_kwargs", "{}"}};
        int[] plain = parser.parse(body("{\"prompt\": \"Hi\"}"), false).promptIds();
        for (String[] f : off) {
            assertThat(parser.parse(body("{\"prompt\": \"Hi\", \"" + f[0] + "\": " + f[1] + "}"), false).promptIds())
                    .as(f[0]).containsExactly(plain);
        }
        for (String field : new String[] {"chat_template", "return_token_strs", "continue_final_message"}) {
            String value = field.equals("chat_template") ? "\"{{ 1 }}\"" : "true";
            assertThat(refusal(() -> parser.tokenize(body("{\"prompt\": \"Hi\", \"" + field + "\": " + value + "}"))).param())
                    .isEqualTo(field);
        }
    }
}

package io.kvtier.model.chat;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvtier.engine.ReferenceRecords;
import io.kvtier.model.Tokenizer;
import io.kvtier.model.gguf.GgufFile;
import io.kvtier.model.tokenizer.GgufTokenizer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Real chat templates (Llama 3.2 and Qwen2.5 from the gguf-ref models, Phi-3 from llama.cpp's
 * vocab file) render exactly the text the reference rendered with Python's Jinja2, and that
 * text tokenizes to llama.cpp's ids.
 */
class ChatTemplateTest {

    private static final List<ChatMessage> CHAT = List.of(
            ChatMessage.system("You are a helpful assistant."),
            ChatMessage.user("Write one short sentence about the sea."));
    /** 26 Jul 2024, the date the reference fixed. */
    private static final Clock JULY_26 = Clock.fixed(Instant.parse("2024-07-26T12:00:00Z"), ZoneOffset.UTC);




    /** Renders the reference's chat on the model's template; asserts Jinja2's text and llama.cpp's ids; returns the template. */
    private static ChatTemplate rendersAsReference(String model, Map<String, Object> extra) throws IOException {
        JsonNode expected = ChatReferences.chat(model.replace(".gguf", ".ref.jsonl"));
        try (GgufFile f = GgufFile.open(ChatReferences.ref(model))) {
            GgufTokenizer tok = GgufTokenizer.of(f);
            ChatTemplate t = ChatTemplate.of(f, tok);
            String text = t.render(CHAT, true, extra);
            assertThat(text).isEqualTo(expected.get("prompt_text").asText());
            assertThat(t.encode(tok, text)).containsExactly(ChatReferences.ints(expected.get("prompt_ids")));
            return t;
        }
    }

    @Test
    void llama3TemplateMatchesJinja2AndLlamaCppIds() throws IOException {
        ChatTemplate t = rendersAsReference("llama3-bpe-q8_0.gguf", Map.of("date_string", "26 Jul 2024"));
        assertThat(t.stopTokenIds()).contains(128_001, 128_008, 128_009);
        // Without date_string the template calls strftime_now("%d %b %Y").
        String expected = ChatReferences.chat("llama3-bpe-q8_0.ref.jsonl").get("prompt_text").asText();
        ChatTemplate dated = new ChatTemplate("llama3", t.source(), "<|begin_of_text|>", "<|eot_id|>",
                t.stopTokenIds(), JULY_26);
        assertThat(dated.render(CHAT, true)).isEqualTo(expected);
        assertThat(dated.render(CHAT, false))
                .isEqualTo(expected.replace("<|start_header_id|>assistant<|end_header_id|>\n\n", ""));
    }

    @Test
    void qwen2TemplateMatchesJinja2AndLlamaCppIds() throws IOException {
        ChatTemplate t = rendersAsReference("qwen2-bpe-q8_0.gguf", Map.of());
        assertThat(t.stopTokenIds()).containsExactly(151_643, 151_645);
        // Without a system message the template supplies Qwen's own.
        assertThat(t.render(List.of(ChatMessage.user("Hi")), true)).isEqualTo("<|im_start|>system\nYou are Qwen,"
                + " created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
                + "<|im_start|>assistant\n");
    }

    @Test
    void messageContentIsTextNeverTemplateCode() throws IOException {
        // Jinjava's nested interpretation would render (or refuse) template syntax inside a value:
        // a user's message must reach the model as the bytes it sent.
        ChatTemplate t = rendersAsReference("qwen2-bpe-q8_0.gguf", Map.of());
        String content = "{{ 1 + 1 }} {% raw %} {# x #} {% if true %}y{% endif %}";
        assertThat(t.render(List.of(ChatMessage.user(content)), false)).contains("<|im_start|>user\n" + content + "<|im_end|>");
    }

    @Test
    void phi3TemplateFromLlamaCppVocab() {
        try (GgufFile f = GgufFile.open(ReferenceRecords.shared().resolve("models/gguf/vocab/ggml-vocab-phi-3.gguf"))) {
            GgufTokenizer tok = GgufTokenizer.of(f);
            ChatTemplate t = ChatTemplate.of(f, tok);
            String text = t.render(List.of(ChatMessage.user("Hi"), ChatMessage.assistant("Hello."),
                    ChatMessage.user("Bye")), true);
            assertThat(text).isEqualTo("<s><|user|>\nHi<|end|>\n<|assistant|>\nHello.<|end|>\n<|user|>\nBye<|end|>\n"
                    + "<|assistant|>\n");
            // <|end|> (32007) is an end-of-turn token besides EOS 32000.
            assertThat(t.stopTokenIds()).contains(32_000, 32_007);
            // llama.cpp marks Phi-3's special tokens RSTRIP (the "\n" after <|user|> goes) and SentencePiece
            // puts its space prefix on text that follows a special token.
            var v = tok.vocabulary();
            assertThat(t.encode(tok, text)).containsExactly(1, 32_010, v.id("\u2581Hi"), 32_007, 32_001,
                    v.id("\u2581Hello"), v.id("."), 32_007, 32_010, v.id("\u2581By"), v.id("e"), 32_007, 32_001);
        }
    }

    /**
     * Qwen3's template (namespace with an expression argument, {@code messages[::-1]},
     * {@code .startswith}/{@code .endswith}/{@code .split}/{@code .lstrip}/{@code .rstrip}/{@code .strip}).
     * The expected texts are Python Jinja2 3.1.6's rendering of the same template with
     * transformers' settings (trim_blocks, lstrip_blocks, loopcontrols): a past assistant turn
     * loses its {@code <think>} block, the last one (after the last user query) keeps it.
     */
    @Test
    void qwen3TemplateMatchesJinja2AndLlamaCppIds() throws IOException {
        ChatTemplate t = rendersAsReference("qwen3-bpe-f16.gguf", Map.of());
        List<ChatMessage> turns = List.of(ChatMessage.system("You are a helpful assistant."),
                ChatMessage.user("What is 2+2?"), ChatMessage.assistant("<think>\nSimple sum.\n</think>\n\n4."),
                ChatMessage.user("And 3+3?"));
        String head = "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nWhat is 2+2?<|im_end|>\n"
                + "<|im_start|>assistant\n4.<|im_end|>\n<|im_start|>user\nAnd 3+3?<|im_end|>\n";
        assertThat(t.render(turns, true)).isEqualTo(head + "<|im_start|>assistant\n");
        List<ChatMessage> closed = new java.util.ArrayList<>(turns);
        closed.add(ChatMessage.assistant("<think>\nAgain.\n</think>\n\n6."));
        assertThat(t.render(closed, false)).isEqualTo(head + "<|im_start|>assistant\n<think>\nAgain.\n</think>\n\n6.<|im_end|>\n");
        assertThat(t.render(List.of(ChatMessage.user("What is 2+2?")), true, Map.of("enable_thinking", false)))
                .isEqualTo("<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
    }

    /**
     * An assistant's {@code tool_calls} and a tool reply's {@code tool_call_id} reach the template
     * (they rendered as an empty assistant turn before): the texts are Jinja2 3.1.6's for the same
     * messages on each file's template.
     */
    @Test
    void toolCallsInTheHistoryReachTheTemplate() {
        List<ChatMessage> chat = List.of(ChatMessage.user("What is 2+2?"),
                new ChatMessage("assistant", "", Map.of("tool_calls", List.of(Map.of("id", "c1", "type", "function",
                        "function", Map.of("name", "calc", "arguments", "{\"x\": \"2+2\"}"))))),
                new ChatMessage("tool", "4", Map.of("tool_call_id", "c1", "name", "calc")));
        try (GgufFile f = GgufFile.open(ChatReferences.ref("qwen3-bpe-f16.gguf"))) {
            assertThat(ChatTemplate.of(f, GgufTokenizer.of(f)).render(chat, true)).isEqualTo(
                    "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n<tool_call>\n"
                    + "{\"name\": \"calc\", \"arguments\": {\"x\": \"2+2\"}}\n</tool_call><|im_end|>\n"
                    + "<|im_start|>user\n<tool_response>\n4\n</tool_response><|im_end|>\n<|im_start|>assistant\n");
        }
        try (GgufFile f = GgufFile.open(ChatReferences.ref("llama3-bpe-q8_0.gguf"))) {
            assertThat(ChatTemplate.of(f, GgufTokenizer.of(f)).render(chat, true, Map.of("date_string", "26 Jul 2024")))
                    .isEqualTo("<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: "
                            + "December 2023\nToday Date: 26 Jul 2024\n\n<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n"
                            + "What is 2+2?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"
                            + "{\"name\": \"calc\", \"parameters\": \"{\\\"x\\\": \\\"2+2\\\"}\"}<|eot_id|>"
                            + "<|start_header_id|>ipython<|end_header_id|>\n\n\"4\"<|eot_id|>"
                            + "<|start_header_id|>assistant<|end_header_id|>\n\n");
        }
    }

    @Test
    void pythonStringMethodsAndExtendedSlices() {
        ChatTemplate t = new ChatTemplate("t", "{{ 'a</think>'.split('</think>')[-1] }}|{{ 'x  y z'.split() }}|"
                + "{{ 'a,b,,'.split(',') }}|{{ 'a,b,c'.split(',', 1) }}|{{ '\n\nx\n'.lstrip('\n') }}|{{ ' x '.strip() }}|"
                + "{{ 'ab'.startswith(('x', 'a')) }}{{ 'ab'.endswith('a') }}|{{ 'abcdef'[::2] }}|{{ [1, 2, 3, 4][-1::-2] }}|"
                + "{{ [1, 2, 3][::-1][0] }}|{{ 'Ab'.upper() }}{{ 'Ab'.lower() }}|{{ messages[::-1]|length }}",
                "", "", new int[0], JULY_26);
        assertThat(t.render(List.of(ChatMessage.user("a"), ChatMessage.user("b")), false))
                .isEqualTo("|['x', 'y', 'z']|['a', 'b', '', '']|['a', 'b,c']|x\n|x|truefalse|ace|[4, 2]|3|ABab|2");
    }

    @Test
    void unsupportedConstructsFailWithOneLineNamingThem() {
        String src = "{{ messages[0].content }}\n{{ messages[0].content.title() }}";
        ChatTemplate method = new ChatTemplate("chat template of GGUF file m.gguf", src, "", "", new int[0], JULY_26);
        assertThatThrownBy(() -> method.render(List.of(ChatMessage.user("x")), true))
                .isInstanceOf(ChatTemplateException.class)
                .hasMessage("chat template of GGUF file m.gguf cannot be rendered: line 2 uses the method .title(), which is"
                        + " not supported: {{ messages[0].content.title() }}");
        ChatTemplate filter = new ChatTemplate("t", "{{ messages|nosuch }}", "", "", new int[0], JULY_26);
        assertThatThrownBy(() -> filter.render(List.of(ChatMessage.user("x")), true))
                .hasMessage("t cannot be rendered: line 1 uses the filter 'nosuch', which is not supported: {{ messages|nosuch }}");
        ChatTemplate tag = new ChatTemplate("t", "{% generation %}x{% endgeneration %}", "", "", new int[0], JULY_26);
        assertThatThrownBy(() -> tag.render(List.of(ChatMessage.user("x")), true))
                .hasMessageStartingWith("t cannot be rendered: line 1 uses ")
                .hasMessageNotContaining("jinjava").hasMessageNotContaining("\n");
    }

    @Test
    void plainTemplateForModelsWithoutOne() {
        Tokenizer llama2c = Tokenizer.load(ReferenceRecords.tokenizer(), 512);
        ChatTemplate t = ChatTemplate.plain(llama2c);
        assertThat(t.render(List.of(ChatMessage.system("Be brief."), ChatMessage.user("  Once upon a time ")), true))
                .isEqualTo("System: Be brief.\n\nUser: Once upon a time\n\nAssistant:");
        assertThat(t.stopTokenIds()).containsExactly(Tokenizer.BOS);
        try (GgufFile f = GgufFile.open(ReferenceRecords.shared().resolve("models/gguf/stories260K.gguf"))) {
            GgufTokenizer tok = GgufTokenizer.of(f);
            ChatTemplate g = ChatTemplate.of(f, tok);
            assertThat(g.source()).isEqualTo(ChatTemplate.PLAIN);
            assertThat(g.stopTokenIds()).containsExactly(2);
            assertThat(g.encode(tok, "User: Hi\n\nAssistant:")[0]).isEqualTo(1);
        }
    }

    /**
     * The built-in plain template is rendered in Java; the same source through Jinjava must give
     * the same text, byte for byte, on roles and contents that exercise capitalize and trim.
     */
    @Test
    void plainTemplateInJavaRendersWhatJinjavaRenders() {
        Tokenizer llama2c = Tokenizer.load(ReferenceRecords.tokenizer(), 512);
        ChatTemplate java = ChatTemplate.plain(llama2c);
        ChatTemplate jinja = new ChatTemplate("plain through jinjava", ChatTemplate.PLAIN, "", "", new int[] {Tokenizer.BOS}, JULY_26);
        List<List<ChatMessage>> chats = List.of(
                List.of(ChatMessage.system("You tell stories"), ChatMessage.user("Tell me a story")),
                List.of(ChatMessage.user("\t\n  two\n\nlines \u0001"), ChatMessage.assistant(" a reply\r\n"),
                        ChatMessage.user("again")),
                List.of(new ChatMessage("TOOL", "x"), new ChatMessage("mIxEd", ""), new ChatMessage("élan", "  é  "),
                        new ChatMessage("", "empty role")),
                List.of());
        for (List<ChatMessage> chat : chats) {
            for (boolean gen : new boolean[] {true, false}) {
                assertThat(java.render(chat, gen)).as("%s gen=%s", chat, gen).isEqualTo(jinja.render(chat, gen));
            }
        }
        assertThat(java.render(chats.get(0), true)).isEqualTo("System: You tell stories\n\nUser: Tell me a story\n\nAssistant:");
        assertThat(java.render(chats.get(2), false)).isEqualTo("Tool: x\n\nMixed: \n\nÉlan: é\n\n: empty role\n\n");
        // Text that looks like template code stays text (Jinjava refuses this content: it re-parses it).
        assertThat(java.render(List.of(ChatMessage.user("{{ 1 + 1 }} {% raw %}\u00a0")), true))
                .isEqualTo("User: {{ 1 + 1 }} {% raw %}\u00a0\n\nAssistant:");
    }

    @Test
    void raiseExceptionRefusesWithTheTemplatesMessage() {
        ChatTemplate t = new ChatTemplate("test template", "{% if messages[0].role != 'user' %}"
                + "{{ raise_exception('Conversation roles must alternate user/assistant') }}{% endif %}ok", "", "",
                new int[] {2}, JULY_26);
        assertThat(t.render(List.of(ChatMessage.user("x")), true)).isEqualTo("ok");
        assertThatThrownBy(() -> t.render(List.of(ChatMessage.assistant("x")), true))
                .isInstanceOf(ChatTemplateException.class)
                .hasMessage("test template refused the messages: Conversation roles must alternate user/assistant");
    }

    @Test
    void tojsonWritesPythonJson() {
        Map<String, Object> tool = new LinkedHashMap<>();
        tool.put("name", "get_weather");
        tool.put("parameters", Map.of("city", "Zürich \"old\"\n"));
        tool.put("n", List.of(1, 2.5, true));
        ChatTemplate t = new ChatTemplate("t", "{{ tool | tojson }}|{{ tool | tojson(indent=2) }}|{{ strftime_now('%Y-%m-%d %a %B %e') }}",
                "", "", new int[0], JULY_26);
        assertThat(t.render(List.of(), false, Map.of("tool", tool))).isEqualTo(
                "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Zürich \\\"old\\\"\\n\"}, \"n\": [1, 2.5, true]}"
                + "|{\n  \"name\": \"get_weather\",\n  \"parameters\": {\n    \"city\": \"Zürich \\\"old\\\"\\n\"\n  },\n"
                + "  \"n\": [\n    1,\n    2.5,\n    true\n  ]\n}|2024-07-26 Fri July 26");
    }

    @Test
    void notBindsLooserThanComparisonsAsInJinja2() {
        ChatTemplate t = new ChatTemplate("t", "{% if not d is defined %}A{% else %}B{% endif %}"
                + "{{ not n == 3 }} {{ n > 1 and not d == 'y' }} {{ 'x' not in d }} {{ d is not none }}"
                + "{% if not messages|length == 1 -%} many {%- endif %}{{ ' not a word ' }}",
                "", "", new int[0], JULY_26);
        assertThat(t.render(List.of(), false, Map.of("d", "x", "n", 3))).isEqualTo("Bfalse true false truemany not a word ");
        assertThat(NotPrecedence.expression(" if not (a) and not b.c is defined -")).isEqualTo(
                " if not ( (a)) and not ( b.c is defined) -");
    }

    @Test
    void loopControlsWork() {
        ChatTemplate t = new ChatTemplate("t", "{% for m in messages %}{% if loop.first %}{% continue %}{% endif %}"
                + "{{ m.content }}{% break %}{% endfor %}", "", "", new int[0], JULY_26);
        assertThat(t.render(List.of(ChatMessage.user("a"), ChatMessage.user("b"), ChatMessage.user("c")), false))
                .isEqualTo("b");
    }
}

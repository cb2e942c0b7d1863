package io.kvtier.model.chat;

import com.hubspot.jinjava.Jinjava;
import com.hubspot.jinjava.JinjavaConfig;
import com.hubspot.jinjava.LegacyOverrides;
import com.hubspot.jinjava.el.JinjavaInterpreterResolver;
import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.interpret.RenderResult;
import com.hubspot.jinjava.interpret.TemplateError;
import com.hubspot.jinjava.lib.filter.Filter;
import com.hubspot.jinjava.lib.fn.ELFunctionDefinition;
import io.kvtier.model.TextTokenizer;
import io.kvtier.model.gguf.GgufFile;
import io.kvtier.model.tokenizer.GgufTokenizer;
import io.kvtier.model.tokenizer.Vocabulary;
import java.time.Clock;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import jinjava.javax.el.CompositeELResolver;

/**
 * A model's chat template ({@code tokenizer.chat_template}, a Hugging Face Jinja template)
 * rendered with Jinjava the way {@code transformers.apply_chat_template} renders it:
 * {@code trim_blocks} and {@code lstrip_blocks}, loop controls, the variables {@code messages}
 * (a list of {@code {role, content}} maps), {@code add_generation_prompt}, {@code bos_token},
 * {@code eos_token}, and the functions real templates call: {@code raise_exception(msg)},
 * {@code strftime_now(fmt)} (also defined as a variable, since templates test
 * {@code strftime_now is defined}) and Python's {@code tojson} (with {@code indent}).
 *
 * <p>Models without a template get {@link #PLAIN}: {@code "Role: content\n\n"} per message and
 * {@code "Assistant:"} as the generation prompt, rendered in Java ({@link PlainChat}, the same
 * text) so that such a model never starts Jinjava. The template's end-of-turn tokens
 * ({@link #stopTokenIds()}) end generation as well as EOS.
 *
 * <p>Jinja2 reads {@code not a == b} as {@code not (a == b)}, Jinjava as {@code (not a) == b}; the
 * template is rewritten to Jinja2's reading first ({@link NotPrecedence}).
 *
 * <p>Python's string methods ({@code .startswith}, {@code .split}, {@code .lstrip} ...) come from
 * {@link PyStringMethods}; extended slices ({@code [::-1]}) and expressions as keyword arguments
 * ({@code namespace(i=messages|length - 1)}) are rewritten first ({@link PySyntax}); Qwen3's
 * template needs all three. A template using anything else Jinjava lacks (an unknown filter,
 * function, tag or method, syntax it cannot parse) fails with a {@link ChatTemplateException}:
 * one line naming the template, the line and the construct ({@link TemplateErrors}).
 *
 * <p>Immutable and thread-safe.
 */
public final class ChatTemplate {

    /** The template of models that have none. */
    public static final String PLAIN = "{%- for message in messages %}{{ message.role | capitalize }}: "
            + "{{ message.content | trim }}{{ '\\n\\n' }}{% endfor %}"
            + "{%- if add_generation_prompt %}{{ 'Assistant:' }}{% endif %}";

    /** Per-render state for the static template functions. */
    private static final ThreadLocal<Render> CURRENT = new ThreadLocal<>();

    private final String name;
    private final String source;
    /** {@link #PLAIN} of the factories: rendered in Java ({@link PlainChat}), Jinjava never loaded. */
    private final boolean builtInPlain;
    /** The source as Jinjava must read it ({@link NotPrecedence}). */
    private final String compiled;
    private final String bosToken;
    private final String eosToken;
    private final int[] stopTokenIds;
    private final Clock clock;
    /** Why the template cannot render (a filter Jinjava lacks), or null. */
    private final String unknownFilter;

    private record Render(Clock clock, String[] raised) {
    }

    /**
     * @param name         what to call the template in messages ("chat template of GGUF file x")
     * @param source       the Jinja source
     * @param bosToken     the BOS token's text, or "" when none
     * @param eosToken     the EOS token's text, or ""
     * @param stopTokenIds ids that end a reply (EOS and end-of-turn tokens)
     * @param clock        for {@code strftime_now}
     */
    public ChatTemplate(String name, String source, String bosToken, String eosToken, int[] stopTokenIds, Clock clock) {
        this(name, source, bosToken, eosToken, stopTokenIds, clock, false);
    }

    private ChatTemplate(String name, String source, String bosToken, String eosToken, int[] stopTokenIds, Clock clock,
            boolean builtInPlain) {
        this.name = name;
        this.builtInPlain = builtInPlain;
        this.source = source;
        this.compiled = NotPrecedence.rewrite(source);
        this.bosToken = bosToken;
        this.eosToken = eosToken;
        this.stopTokenIds = stopTokenIds.clone();
        this.clock = clock;
        this.unknownFilter = builtInPlain ? null
                : TemplateErrors.unknownFilter(source, f -> Jinja.ENGINE.getGlobalContext().getFilter(f) != null);
    }

    /** The GGUF file's template, or {@link #PLAIN}; stop ids are the tokenizer's end-of-generation ids. */
    public static ChatTemplate of(GgufFile file, GgufTokenizer tokenizer) {
        Vocabulary v = tokenizer.vocabulary();
        String src = file.metadata().getString("tokenizer.chat_template", null);
        String name = (src == null ? "plain chat template (GGUF file " : "chat template of GGUF file ") + file.path()
                + (src == null ? " has none)" : "");
        return new ChatTemplate(name, src == null ? PLAIN : src, text(v, v.bos()), text(v, v.eos()),
                tokenizer.stopTokenIds(), Clock.systemDefaultZone(), src == null);
    }

    /** {@link #PLAIN} for a tokenizer without token texts (llama2.c's). */
    public static ChatTemplate plain(TextTokenizer tokenizer) {
        return new ChatTemplate("plain chat template", PLAIN, "", "", tokenizer.stopTokenIds(), Clock.systemDefaultZone(), true);
    }

    private static String text(Vocabulary v, int id) {
        return id == Vocabulary.NONE ? "" : v.text(id);
    }

    public String source() {
        return source;
    }

    /** Ids that end a reply (EOS and end-of-turn tokens such as {@code <|eot_id|>}, {@code <|im_end|>}), ascending. */
    public int[] stopTokenIds() {
        return stopTokenIds.clone();
    }

    /** The prompt text of {@code messages}, ending with the assistant's header when {@code addGenerationPrompt}. */
    public String render(List<ChatMessage> messages, boolean addGenerationPrompt) {
        return render(messages, addGenerationPrompt, Map.of());
    }

    /**
     * As {@link #render(List, boolean)} with extra template variables (for example Llama 3's
     * {@code date_string}).
     *
     * @throws ChatTemplateException when the template does not render or refuses the messages
     */
    public String render(List<ChatMessage> messages, boolean addGenerationPrompt, Map<String, Object> extra) {
        if (builtInPlain) {
            return PlainChat.render(messages, addGenerationPrompt);
        }
        List<Map<String, Object>> msgs = new ArrayList<>();
        for (ChatMessage m : messages) {
            Map<String, Object> o = new LinkedHashMap<>(m.fields());
            o.put("role", m.role());
            o.put("content", m.content());
            msgs.add(o);
        }
        Map<String, Object> ctx = new HashMap<>(extra);
        ctx.put("messages", msgs);
        ctx.put("add_generation_prompt", addGenerationPrompt);
        ctx.put("bos_token", bosToken);
        ctx.put("eos_token", eosToken);
        ctx.put("strftime_now", true); // so `strftime_now is defined` holds; the call resolves to the function
        Render state = new Render(clock, new String[1]);
        if (unknownFilter != null) {
            throw new ChatTemplateException(name + " cannot be rendered: " + unknownFilter);
        }
        CURRENT.set(state);
        RenderResult r;
        try {
            r = Jinja.ENGINE.renderForResult(compiled, ctx);
        } finally {
            CURRENT.remove();
        }
        if (state.raised()[0] != null) {
            throw new ChatTemplateException(name + " refused the messages: " + state.raised()[0]);
        }
        for (TemplateError e : r.getErrors()) {
            String problem = TemplateErrors.unsupported(e, source);
            if (problem != null) {
                throw new ChatTemplateException(name + " cannot be rendered: " + problem);
            }
        }
        return r.getOutput();
    }

    /**
     * The token ids of a rendered prompt: control-token texts become their ids
     * (parse_special), and BOS is added as the tokenizer says unless the text already starts
     * with it (Llama 3's template writes {@code <|begin_of_text|>} itself).
     */
    public int[] encode(TextTokenizer tokenizer, String rendered) {
        boolean hasBos = !bosToken.isEmpty() && rendered.startsWith(bosToken);
        return tokenizer.encode(rendered, !hasBos, true);
    }

    // --- template functions (public static: Jinjava calls them by reflection) ---

    /** {@code raise_exception(message)}: records the message and aborts the render. */
    public static String raiseException(String message) {
        Render r = CURRENT.get();
        if (r != null) {
            r.raised()[0] = message;
        }
        throw new IllegalStateException(message);
    }

    /** {@code strftime_now(format)}: the current time in Python strftime format. */
    public static String strftimeNow(String format) {
        Render r = CURRENT.get();
        return Strftime.format(format, ZonedDateTime.now(r == null ? Clock.systemDefaultZone() : r.clock()));
    }

    /**
     * The process's one Jinjava, created on first use: its start-up (hundreds of classes, filter
     * and tag registries) costs about a second of CPU, which a llama2.c model's plain template
     * never needs.
     */
    private static final class Jinja {
        static final Jinjava ENGINE = jinjava();
    }

    private static Jinjava jinjava() {
        // Jinja2's behaviour where Jinjava's default differs: {{- -}} trimming, strict whitespace
        // control, backslash escapes in quotes, dict keys and iteration, Python
        // reprs, the final newline dropped. (Not LegacyOverrides.ALL: it requires spaces inside
        // "{{-" tokens that real templates leave out.)
        LegacyOverrides jinja2 = LegacyOverrides.newBuilder()
                .withUseTrimmingForNotesAndExpressions(true)
                .withParseWhitespaceControlStrictly(true)
                .withHandleBackslashInQuotesOnly(true)
                .withEvaluateMapKeys(true)
                .withIterateOverMapKeys(true)
                .withUsePyishObjectMapper(true)
                .withKeepNullableLoopValues(true)
                .withDefaultKeepTrailingNewlineBehavior(true)
                .build();
        CompositeELResolver resolver = new CompositeELResolver();
        resolver.add(new PyStringMethods());
        resolver.add(JinjavaInterpreterResolver.DEFAULT_RESOLVER_READ_ONLY);
        // No nested interpretation: a value (a user's message) is text, never template code to run.
        Jinjava j = new Jinjava(JinjavaConfig.newBuilder().withTrimBlocks(true).withLstripBlocks(true)
                .withNestedInterpretationEnabled(false)
                .withLegacyOverrides(jinja2).withElResolver(resolver).build());
        j.getGlobalContext().registerFunction(new ELFunctionDefinition("", "raise_exception", ChatTemplate.class,
                "raiseException", String.class));
        j.getGlobalContext().registerFunction(new ELFunctionDefinition("", "strftime_now", ChatTemplate.class,
                "strftimeNow", String.class));
        j.getGlobalContext().registerFilter(new ToJson());
        j.getGlobalContext().registerFilter(new PySlice());
        j.getGlobalContext().registerExpTest(new PyIterable());
        return j;
    }

    /**
     * Jinja2's {@code iterable} test, true for strings too (Jinjava's is false for them): Llama 3's
     * template writes a tool reply whose content {@code is mapping or iterable} through
     * {@code tojson}, so a text reply is quoted there, as in Jinja2.
     */
    private static final class PyIterable extends com.hubspot.jinjava.lib.exptest.IsIterableExpTest {
        @Override
        public boolean evaluate(Object var, JinjavaInterpreter interpreter, Object... args) {
            return var instanceof CharSequence || super.evaluate(var, interpreter, args);
        }
    }

    /** Hugging Face's {@code tojson}: Python's json.dumps(ensure_ascii=False), {@code indent} optional. */
    private static final class ToJson implements Filter {
        @Override
        public String getName() {
            return "tojson";
        }

        @Override
        public Object filter(Object var, JinjavaInterpreter interpreter, String... args) {
            return PyJson.dumps(var, args.length > 0 ? Integer.valueOf(args[0]) : null);
        }

        @Override
        public Object filter(Object var, JinjavaInterpreter interpreter, Object[] args, Map<String, Object> kwargs) {
            Object indent = kwargs.get("indent");
            if (indent == null && args.length > 0) {
                indent = args[0];
            }
            return PyJson.dumps(var, indent == null ? null : ((Number) (indent instanceof String s ? Long.valueOf(s) : indent)).intValue());
        }
    }

    /** Python's {@code x[start:stop:step]} on a list or string ({@link PySyntax} writes {@code x|py_slice(start, stop, step)}). */
    private static final class PySlice implements Filter {
        @Override
        public String getName() {
            return "py_slice";
        }

        @Override
        public Object filter(Object var, JinjavaInterpreter interpreter, String... args) {
            throw new IllegalStateException("py_slice is called with its arguments as objects");
        }

        @Override
        public Object filter(Object var, JinjavaInterpreter interpreter, Object[] args, Map<String, Object> kwargs) {
            return PySyntax.applySlice(var, args);
        }
    }
}

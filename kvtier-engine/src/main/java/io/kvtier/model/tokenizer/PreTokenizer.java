package io.kvtier.model.tokenizer;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Splits text into words before byte-level BPE, as llama.cpp's {@code unicode_regex_split} does
 * for the pre-tokenizer named by {@code tokenizer.ggml.pre}: the regexes of
 * {@code llm_tokenizer_bpe} are applied in order, each to every piece the previous one left,
 * and both the matches and the text between them become pieces. A regex sees one piece only,
 * so a lookahead such as {@code \s+(?!\S)} stops at the piece's end.
 *
 * <p>The patterns are llama.cpp's (its case-insensitive contractions already spelled out as
 * {@code '[sS]}...), compiled with {@link Pattern#UNICODE_CHARACTER_CLASS}, so {@code \s} is
 * Unicode White_Space and {@code \p{L}} / {@code \p{N}} are the Unicode letter and number
 * categories, as in llama.cpp's code-point tables. Supported: {@code llama-bpe} (and its
 * aliases {@code llama3}, {@code llama-v3}, {@code falcon3}, {@code pixtral}), {@code qwen2}
 * ({@code deepseek-r1-qwen}, {@code megrez}, {@code stablelm2}), {@code gpt-2} ({@code phi-2},
 * {@code mpt}, {@code olmo}, ...), {@code starcoder} and {@code smollm} (also {@code refact},
 * {@code command-r}, {@code codeshell}, {@code exaone}) and {@code default}.
 *
 * <p>Immutable and thread-safe.
 */
public final class PreTokenizer {

    private static final String CONTRACTIONS = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])";
    private static final String LLAMA3 = CONTRACTIONS
            + "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    private static final String QWEN2 = CONTRACTIONS
            + "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    private static final String GPT2 = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";

    private static final Set<String> LLAMA3_NAMES = Set.of("llama3", "llama-v3", "llama-bpe", "falcon3", "pixtral");

    private final String name;
    private final Pattern[] patterns;

    private PreTokenizer(String name, String... regexes) {
        this.name = name;
        this.patterns = new Pattern[regexes.length];
        for (int i = 0; i < regexes.length; i++) {
            patterns[i] = Pattern.compile(regexes[i], Pattern.UNICODE_CHARACTER_CLASS);
        }
    }

    /** True for the names llama.cpp maps to its LLAMA3 pre-type (which also ignores merges and adds BOS). */
    static boolean isLlama3(String pre) {
        return LLAMA3_NAMES.contains(pre);
    }

    /**
     * The pre-tokenizer {@code tokenizer.ggml.pre} names, or null when kvtier does not know it.
     */
    public static PreTokenizer named(String pre) {
        if (isLlama3(pre)) {
            return new PreTokenizer(pre, LLAMA3);
        }
        return switch (pre) {
            case "qwen2", "deepseek-r1-qwen", "megrez", "stablelm2" -> new PreTokenizer(pre, QWEN2);
            case "gpt-2", "phi-2", "mpt", "olmo", "jais", "jina-es", "jina-de", "jina-v2-es", "jina-v2-de", "exaone4" ->
                    new PreTokenizer(pre, GPT2);
            case "starcoder", "smollm", "refact", "command-r", "codeshell", "exaone", "minerva-7b" ->
                    new PreTokenizer(pre, "\\p{N}", GPT2);
            case "default" -> new PreTokenizer(pre, "[\\p{P}\\$\\+<=>\\^~\\|]+", GPT2, "\\p{N}+", "[0-9][0-9][0-9]");
            default -> null;
        };
    }

    public String name() {
        return name;
    }

    /** The words of {@code text}, in order; their concatenation is {@code text}. */
    public List<String> split(String text) {
        List<String> pieces = List.of(text);
        for (Pattern p : patterns) {
            List<String> next = new ArrayList<>();
            for (String piece : pieces) {
                splitOne(p, piece, next);
            }
            pieces = next;
        }
        return pieces;
    }

    private static void splitOne(Pattern p, String piece, List<String> out) {
        Matcher m = p.matcher(piece);
        int last = 0;
        while (m.find()) {
            if (m.start() > last) {
                out.add(piece.substring(last, m.start()));
            }
            if (m.end() > m.start()) {
                out.add(piece.substring(m.start(), m.end()));
            }
            last = m.end();
        }
        if (last < piece.length()) {
            out.add(piece.substring(last));
        }
    }
}

package io.kvtier.model.tokenizer;

import io.kvtier.model.ModelFormatException;
import io.kvtier.model.gguf.GgufMetadata;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

/**
 * The token table of a GGUF file ({@code tokenizer.ggml.*}) with the facts llama.cpp derives
 * from it when it loads a vocabulary ({@code llama_vocab::impl::load}): token attributes, the
 * special ids (BOS, EOS, EOT, EOM, UNK, PAD), whether BOS/EOS are added, whether SentencePiece
 * adds a space prefix, the end-of-generation set, and the special tokens in the order they are
 * matched in text (longest first).
 *
 * <p>Immutable after construction.
 */
public final class Vocabulary {

    /** llama.cpp's LLAMA_TOKEN_NULL. */
    public static final int NONE = -1;

    /** The tokenizer model: {@code llama} (SentencePiece) or {@code gpt2} (byte-level BPE). */
    public enum Model { SPM, BPE }

    final String file;
    final Model model;
    final String pre;
    final String[] texts;
    final float[] scores;
    final int[] attrs;
    final StringIntMap ids;
    final int bos;
    final int eos;
    final int eot;
    final int eom;
    final int unk;
    final int pad;
    final boolean addBos;
    final boolean addEos;
    final boolean addSpacePrefix;
    /** Ids that end generation, ascending. */
    final int[] eog;
    /** Control, user-defined and unknown tokens, longest text first (ties by id). */
    final int[] specials;

    private Vocabulary(String file, GgufMetadata m) {
        this.file = file;
        String modelName = m.getString("tokenizer.ggml.model");
        this.model = switch (modelName) {
            case "llama" -> Model.SPM;
            case "gpt2" -> Model.BPE;
            default -> throw new ModelFormatException(file + ": tokenizer model '" + modelName
                    + "' is not supported (kvtier reads 'llama' = SentencePiece and 'gpt2' = byte-level BPE)");
        };
        this.pre = model == Model.BPE ? m.getString("tokenizer.ggml.pre", "default") : "default";
        this.texts = m.getStringArray("tokenizer.ggml.tokens");
        int n = texts.length;
        if (n == 0) {
            throw new ModelFormatException(file + ": tokenizer.ggml.tokens is empty");
        }
        this.scores = m.has("tokenizer.ggml.scores") ? m.getFloatArray("tokenizer.ggml.scores") : new float[n];
        if (scores.length < n) {
            throw new ModelFormatException(file + ": tokenizer.ggml.scores has " + scores.length + " entries for "
                    + n + " tokens");
        }
        this.attrs = new int[n];
        if (m.has("tokenizer.ggml.token_type")) {
            int[] types = m.getIntArray("tokenizer.ggml.token_type");
            if (types.length < n) {
                throw new ModelFormatException(file + ": tokenizer.ggml.token_type has " + types.length
                        + " entries for " + n + " tokens");
            }
            for (int i = 0; i < n; i++) attrs[i] = TokenAttr.ofType(types[i]);
        } else {
            Arrays.fill(attrs, TokenAttr.NORMAL);
        }
        this.ids = new StringIntMap(n);
        for (int i = 0; i < n; i++) {
            if (texts[i].isEmpty()) {
                texts[i] = "[EMPTY_" + i + "]"; // as llama.cpp, so the table stays one-to-one
            }
            int old = ids.putIfAbsent(texts[i], i);
            if (old != StringIntMap.ABSENT) {
                throw new ModelFormatException(file + ": duplicate token in the vocabulary: '" + texts[i] + "' has ids "
                        + old + " and " + i);
            }
        }
        // Defaults by model (llama.cpp), then the file's keys when they name a token in range.
        this.bos = special(m, "tokenizer.ggml.bos_token_id", model == Model.SPM ? 1 : 11);
        this.eos = special(m, "tokenizer.ggml.eos_token_id", model == Model.SPM ? 2 : 11);
        this.unk = special(m, "tokenizer.ggml.unknown_token_id", model == Model.SPM ? 0 : NONE);
        this.pad = special(m, "tokenizer.ggml.padding_token_id", NONE);
        boolean llama3 = model == Model.BPE && PreTokenizer.isLlama3(pre);
        this.addBos = m.getBool("tokenizer.ggml.add_bos_token", model == Model.SPM || llama3);
        this.addEos = m.getBool("tokenizer.ggml.add_eos_token", false);
        this.addSpacePrefix = m.getBool("tokenizer.ggml.add_space_prefix", model == Model.SPM);
        if (addBos && bos == NONE) {
            throw new ModelFormatException(file + ": tokenizer.ggml.add_bos_token is true but there is no BOS token");
        }
        if (addEos && eos == NONE) {
            throw new ModelFormatException(file + ": tokenizer.ggml.add_eos_token is true but there is no EOS token");
        }
        int eotKey = special(m, "tokenizer.ggml.eot_token_id", NONE);
        int eomKey = special(m, "tokenizer.ggml.eom_token_id", NONE);
        this.eot = eotKey != NONE ? eotKey : findControl(EOT_TEXTS);
        this.eom = eomKey != NONE ? eomKey : findControl(Set.of("<|eom_id|>"));
        markUnused();
        this.eog = collectEndOfGeneration();
        applyModelAttrs(m.getString("general.name", "").toLowerCase(Locale.ROOT));
        this.specials = specialOrder();
    }

    /**
     * The vocabulary of a GGUF file's metadata.
     *
     * @param file the file's name for messages ("GGUF file x.gguf")
     * @throws ModelFormatException when a required key is missing or inconsistent, or the
     *         tokenizer model is not {@code llama} or {@code gpt2}
     */
    public static Vocabulary of(String file, GgufMetadata metadata) {
        return new Vocabulary(file, metadata);
    }

    /** Texts llama.cpp takes for end-of-turn tokens when the file names none. */
    private static final Set<String> EOT_TEXTS = Set.of("<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>",
            "<|endoftext|>", "<|end_of_text|>", "<EOT>", "_<EOT>", "<｜end▁of▁sentence｜>", "<end_of_utterance>");

    /** Texts llama.cpp counts as end of generation, whatever the file says. */
    private static final Set<String> EOG_TEXTS = Set.of("<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>",
            "<|endoftext|>", "<|eom_id|>", "<EOT>", "_<EOT>", "<|end_of_text|>", "<end_of_utterance>");

    private int special(GgufMetadata m, String key, int dflt) {
        int id = dflt >= 0 && dflt < texts.length ? dflt : NONE;
        if (!m.has(key)) {
            return id;
        }
        long v = m.getLong(key) & 0xFFFF_FFFFL; // stored as u32: 0xFFFFFFFF means none
        return v < texts.length ? (int) v : id;
    }

    /**
     * The lowest id whose text is in {@code names}, made a control token as llama.cpp does
     * (it scans its hash map, so with several candidates its choice is unspecified; real
     * vocabularies have one).
     */
    private int findControl(Set<String> names) {
        for (int i = 0; i < texts.length; i++) {
            if (names.contains(texts[i])) {
                attrs[i] |= TokenAttr.CONTROL;
                return i;
            }
        }
        return NONE;
    }

    /** Control tokens with "unused" in their text are unused (llama.cpp). */
    private void markUnused() {
        for (int i = 0; i < texts.length; i++) {
            if ((attrs[i] & TokenAttr.CONTROL) != 0 && texts[i].contains("unused")) {
                attrs[i] |= TokenAttr.UNUSED;
            }
        }
    }

    private int[] collectEndOfGeneration() {
        TreeSet<Integer> set = new TreeSet<>();
        for (int i = 0; i < texts.length; i++) {
            if (EOG_TEXTS.contains(texts[i])) {
                set.add(i);
                attrs[i] |= TokenAttr.CONTROL;
            }
        }
        for (int id : new int[] {eos, eot, eom}) {
            if (id != NONE) set.add(id);
        }
        return set.stream().mapToInt(Integer::intValue).toArray();
    }

    /** Per-model attribute fixes llama.cpp applies by the model's name (Phi-3's stripping tokens). */
    private void applyModelAttrs(String name) {
        if (name.contains("phi-3") || name.contains("phi3")) {
            for (int i = 0; i < texts.length; i++) {
                if ((attrs[i] & (TokenAttr.CONTROL | TokenAttr.USER_DEFINED | TokenAttr.UNKNOWN)) != 0) {
                    attrs[i] |= TokenAttr.RSTRIP;
                }
            }
            setAttr("</s>", TokenAttr.RSTRIP, true);
            for (String t : List.of("<unk>", "<s>", "<|endoftext|>")) setAttr(t, TokenAttr.RSTRIP, false);
        }
    }

    private void setAttr(String text, int attr, boolean on) {
        int id = ids.get(text);
        if (id != StringIntMap.ABSENT) {
            attrs[id] = on ? attrs[id] | attr : attrs[id] & ~attr;
        }
    }

    private int[] specialOrder() {
        List<Integer> list = new ArrayList<>();
        for (int i = 0; i < texts.length; i++) {
            if ((attrs[i] & (TokenAttr.CONTROL | TokenAttr.USER_DEFINED | TokenAttr.UNKNOWN)) != 0) list.add(i);
        }
        list.sort(Comparator.<Integer>comparingInt(i -> -texts[i].getBytes(java.nio.charset.StandardCharsets.UTF_8).length)
                .thenComparingInt(i -> i));
        return list.stream().mapToInt(Integer::intValue).toArray();
    }

    public int size() {
        return texts.length;
    }

    public Model model() {
        return model;
    }

    /** {@code tokenizer.ggml.pre} ("default" when absent or for SentencePiece). */
    public String pre() {
        return pre;
    }

    /** The token's text as stored (SentencePiece writes spaces as U+2581; byte-level BPE uses GPT-2's byte alphabet). */
    public String text(int id) {
        return texts[id];
    }

    /** The id of a token text, or {@link #NONE}. */
    public int id(String text) {
        int id = ids.get(text);
        return id == StringIntMap.ABSENT ? NONE : id;
    }

    public int bos() {
        return bos;
    }

    public int eos() {
        return eos;
    }

    /** The end-of-turn token (from {@code tokenizer.ggml.eot_token_id} or its text), or {@link #NONE}. */
    public int eot() {
        return eot;
    }

    public boolean addBos() {
        return addBos;
    }

    public boolean addEos() {
        return addEos;
    }

    /** Ids that end generation (EOS, EOT, EOM and the end-of-turn texts llama.cpp knows), ascending; a copy. */
    public int[] endOfGeneration() {
        return eog.clone();
    }

    public boolean isControl(int id) {
        return (attrs[id] & TokenAttr.CONTROL) != 0;
    }

    boolean has(int id, int attr) {
        return (attrs[id] & attr) != 0;
    }
}

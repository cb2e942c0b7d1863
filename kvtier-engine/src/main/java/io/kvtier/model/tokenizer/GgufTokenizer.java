package io.kvtier.model.tokenizer;

import io.kvtier.model.ModelFormatException;
import io.kvtier.model.TextTokenizer;
import io.kvtier.model.gguf.GgufFile;
import io.kvtier.model.gguf.GgufMetadata;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The tokenizer a GGUF file describes in its {@code tokenizer.ggml.*} metadata, behaving as
 * llama.cpp's {@code llama_tokenize} / {@code llama_detokenize}: SentencePiece ({@code llama})
 * with scores, byte fallback and the space prefix, or byte-level BPE ({@code gpt2}) with merge
 * ranks and the pre-tokenizer {@code tokenizer.ggml.pre} names (see {@link PreTokenizer}).
 * Special tokens are cut out of the text first (longest first): user-defined ones always,
 * control ones only with {@code parseSpecial}. BOS and EOS are added as {@code add_bos_token} /
 * {@code add_eos_token} (or llama.cpp's defaults) say.
 *
 * <p>Immutable and thread-safe.
 */
public final class GgufTokenizer implements TextTokenizer {

    private final Vocabulary vocab;
    private final SpmEncoder spm;
    private final BpeEncoder bpe;
    /** llama.cpp's clean_spaces: BPE pre-tokenizers whose detokenized text drops " ," and friends. */
    private final boolean cleanSpaces;

    private GgufTokenizer(Vocabulary vocab, GgufMetadata m) {
        this.vocab = vocab;
        if (vocab.model == Vocabulary.Model.SPM) {
            this.spm = new SpmEncoder(vocab);
            this.bpe = null;
            this.cleanSpaces = false;
        } else {
            PreTokenizer pre = PreTokenizer.named(vocab.pre);
            if (pre == null) {
                throw new ModelFormatException(vocab.file + ": pre-tokenizer '" + vocab.pre + "' (tokenizer.ggml.pre) is not"
                        + " supported; kvtier knows llama-bpe, qwen2, gpt-2, starcoder, smollm and their aliases");
            }
            this.spm = null;
            this.bpe = new BpeEncoder(vocab, m.getStringArray("tokenizer.ggml.merges"), pre,
                    PreTokenizer.isLlama3(vocab.pre));
            this.cleanSpaces = switch (vocab.pre) {
                case "qwen2", "deepseek-r1-qwen", "smollm", "command-r", "megrez" -> false;
                default -> true;
            };
        }
    }

    /**
     * The tokenizer of {@code file}'s metadata.
     *
     * @throws ModelFormatException naming the file when the metadata lacks or garbles a
     *         tokenizer key, or names a tokenizer model or pre-tokenizer kvtier does not support
     */
    public static GgufTokenizer of(GgufFile file) {
        return of("GGUF file " + file.path(), file.metadata());
    }

    /** As {@link #of(GgufFile)}, from metadata; {@code file} names it in messages. */
    public static GgufTokenizer of(String file, GgufMetadata metadata) {
        return new GgufTokenizer(Vocabulary.of(file, metadata), metadata);
    }

    public Vocabulary vocabulary() {
        return vocab;
    }

    @Override
    public int vocabSize() {
        return vocab.size();
    }

    @Override
    public int bosId() {
        return vocab.bos;
    }

    @Override
    public int[] stopTokenIds() {
        return vocab.endOfGeneration();
    }

    @Override
    public int[] encode(String text, boolean addSpecial, boolean parseSpecial) {
        IntList out = new IntList();
        if (addSpecial && vocab.addBos) {
            out.add(vocab.bos);
        }
        boolean prevSpecial = true; // SentencePiece: a text fragment at the start gets the space prefix
        for (Object f : text.isEmpty() ? List.of() : partition(text, parseSpecial)) {
            if (f instanceof Integer id) {
                out.add(id);
                prevSpecial = true;
            } else if (spm != null) {
                String s = (String) f;
                spm.encode(vocab.addSpacePrefix && prevSpecial ? " " + s : s, out);
                prevSpecial = false;
            } else {
                bpe.encode((String) f, out);
            }
        }
        if (addSpecial && vocab.addEos) {
            out.add(vocab.eos);
        }
        return out.toArray();
    }

    /**
     * The text cut at special tokens (llama.cpp's {@code tokenizer_st_partition}): a list of
     * Strings (text) and Integers (token ids). Tokens marked LSTRIP / RSTRIP swallow the
     * whitespace before / after them.
     */
    private List<Object> partition(String text, boolean parseSpecial) {
        List<Object> frags = new ArrayList<>();
        frags.add(text);
        for (int id : vocab.specials) {
            if (!parseSpecial && vocab.has(id, TokenAttr.CONTROL | TokenAttr.UNKNOWN)) {
                continue;
            }
            String tok = vocab.texts[id];
            List<Object> next = new ArrayList<>(frags.size() + 2);
            for (Object f : frags) {
                if (f instanceof String s && s.contains(tok)) {
                    cut(s, tok, id, next);
                } else {
                    next.add(f);
                }
            }
            frags = next;
        }
        return frags;
    }

    private void cut(String s, String tok, int id, List<Object> out) {
        int from = 0;
        while (from < s.length()) {
            int at = s.indexOf(tok, from);
            if (at < 0) {
                out.add(s.substring(from));
                return;
            }
            int leftEnd = at;
            if (vocab.has(id, TokenAttr.LSTRIP)) {
                while (leftEnd > from && isCSpace(s.charAt(leftEnd - 1))) leftEnd--;
            }
            if (leftEnd > from) {
                out.add(s.substring(from, leftEnd));
            }
            out.add(id);
            from = at + tok.length();
            if (vocab.has(id, TokenAttr.RSTRIP)) {
                while (from < s.length() && isCSpace(s.charAt(from))) from++;
            }
        }
    }

    /** C's isspace in the "C" locale. */
    private static boolean isCSpace(char c) {
        return c == ' ' || (c >= '\t' && c <= '\r');
    }

    /**
     * The bytes of one token (llama.cpp's {@code llama_token_to_piece} without stripping):
     * control and unknown tokens only when {@code renderSpecial}; user-defined tokens as written;
     * normal tokens with U+2581 as space (SentencePiece) or through GPT-2's byte alphabet (BPE);
     * byte tokens as their byte; unused tokens as nothing.
     */
    public byte[] tokenBytes(int id, boolean renderSpecial) {
        if (id < 0 || id >= vocab.size()) {
            throw new IllegalArgumentException("token id " + id + " outside the vocabulary of " + vocab.size());
        }
        String t = vocab.texts[id];
        if (vocab.has(id, TokenAttr.UNKNOWN | TokenAttr.CONTROL)) {
            return renderSpecial ? t.getBytes(StandardCharsets.UTF_8) : new byte[0];
        }
        if (vocab.has(id, TokenAttr.USER_DEFINED)) {
            return t.getBytes(StandardCharsets.UTF_8);
        }
        if (vocab.has(id, TokenAttr.NORMAL)) {
            if (spm != null) {
                return t.replace('\u2581', ' ').getBytes(StandardCharsets.UTF_8);
            }
            ByteArrayOutputStream out = new ByteArrayOutputStream(t.length());
            ByteAlphabet.decode(t, out);
            return out.toByteArray();
        }
        if (vocab.has(id, TokenAttr.BYTE)) {
            return new byte[] {(byte) Integer.parseInt(t.substring(3, 5), 16)};
        }
        return new byte[0];
    }

    @Override
    public byte[] pieceBytes(int prevToken, int token) {
        byte[] b = tokenBytes(token, false);
        // SentencePiece's decoder drops the space it prefixed to the text that follows BOS (as
        // decodeBytes does for the first token, and llama2.c's run.c after BOS).
        if (prevToken != Vocabulary.NONE && prevToken == vocab.bos && vocab.addSpacePrefix && b.length > 0 && b[0] == ' ') {
            return Arrays.copyOfRange(b, 1, b.length);
        }
        return b;
    }

    @Override
    public String decode(int[] ids) {
        return new String(decodeBytes(ids, false), StandardCharsets.UTF_8);
    }

    @Override
    public String decodeWithSpecial(int[] ids) {
        return new String(decodeBytes(ids, true), StandardCharsets.UTF_8);
    }

    /**
     * llama.cpp's {@code llama_detokenize(tokens, remove_special = false, unparse_special =
     * renderSpecial)}: the tokens' bytes, the first token's leading space dropped where
     * SentencePiece added one, and for most BPE pre-tokenizers the clean-up of spaces before
     * {@code ? ! . ,} and in contractions.
     */
    public byte[] decodeBytes(int[] ids, boolean renderSpecial) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = 0; i < ids.length; i++) {
            byte[] b = tokenBytes(ids[i], renderSpecial);
            int skip = i == 0 && vocab.addSpacePrefix && b.length > 0 && b[0] == ' ' ? 1 : 0;
            out.write(b, skip, b.length - skip);
        }
        byte[] text = out.toByteArray();
        return cleanSpaces ? SpaceCleanup.apply(text) : text;
    }
}

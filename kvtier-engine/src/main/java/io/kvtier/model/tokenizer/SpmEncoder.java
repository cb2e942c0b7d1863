package io.kvtier.model.tokenizer;

import io.kvtier.model.ModelFormatException;
import java.nio.charset.StandardCharsets;
import java.util.PriorityQueue;

/**
 * SentencePiece BPE as llama.cpp's {@code llm_tokenizer_spm_session}: spaces are written
 * U+2581, the text is split into characters, and the adjacent pair whose concatenation is a
 * token with the highest score (leftmost on ties) is merged until no pair is a token. A
 * priority queue holds the candidates; stale ones (a side merged since) are skipped. A final
 * symbol that is not a token (only single characters can be: every merge makes a token) falls
 * back to byte tokens {@code <0xNN>}. (llama.cpp's {@code rev_merge} re-segmentation never
 * fires for that reason and is left out.)
 *
 * <p>Immutable and thread-safe.
 */
final class SpmEncoder {

    private final Vocabulary vocab;
    /** Byte value to its {@code <0xNN>} token (or the one-character token of that byte). */
    private final int[] byteTokens = new int[256];

    SpmEncoder(Vocabulary vocab) {
        this.vocab = vocab;
        for (int b = 0; b < 256; b++) {
            int id = vocab.id(String.format("<0x%02X>", b));
            if (id == Vocabulary.NONE && b < 0x80) {
                id = vocab.id(String.valueOf((char) b));
            }
            byteTokens[b] = id;
        }
    }

    private record Bigram(int left, int right, float score, int size) implements Comparable<Bigram> {
        @Override
        public int compareTo(Bigram o) {
            if (score != o.score) {
                return Float.compare(o.score, score);
            }
            return Integer.compare(left, o.left);
        }
    }

    /** Appends the tokens of {@code text} (already with its space prefix, spaces not yet escaped). */
    void encode(String text, IntList out) {
        String s = text.replace(" ", "\u2581");
        SymbolChain c = new SymbolChain(s);
        if (c.size() == 0) {
            return;
        }
        PriorityQueue<Bigram> queue = new PriorityQueue<>();
        for (int i = 1; i < c.size(); i++) {
            tryAdd(c, queue, i - 1, i);
        }
        while (!queue.isEmpty()) {
            Bigram b = queue.poll();
            int l = b.left;
            int r = b.right;
            // Outdated: a side was merged since (llama.cpp compares the byte sizes).
            if (c.isEmpty(l) || c.isEmpty(r) || utf8Length(c.text, c.start[l], c.end[r]) != b.size) {
                continue;
            }
            c.merge(l, r);
            tryAdd(c, queue, c.prev[l], l);
            tryAdd(c, queue, l, c.next[l]);
        }
        for (int i = 0; i >= 0; i = c.next[i]) {
            resegment(c.symbol(i), out);
        }
    }

    private void tryAdd(SymbolChain c, PriorityQueue<Bigram> queue, int l, int r) {
        if (l < 0 || r < 0) {
            return;
        }
        String text = c.pair(l, r);
        int id = vocab.id(text);
        if (id != Vocabulary.NONE) {
            queue.add(new Bigram(l, r, vocab.scores[id], utf8Length(c.text, c.start[l], c.end[r])));
        }
    }

    /** The token of a final symbol, or its bytes as byte tokens. */
    private void resegment(String text, IntList out) {
        int id = vocab.id(text);
        if (id != Vocabulary.NONE) {
            out.add(id);
            return;
        }
        for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
            int t = byteTokens[b & 0xFF];
            if (t == Vocabulary.NONE) {
                throw new ModelFormatException(vocab.file + ": SentencePiece vocabulary has no byte token <0x"
                        + String.format("%02X", b & 0xFF) + "> for text it cannot otherwise encode");
            }
            out.add(t);
        }
    }

    private static int utf8Length(String s, int from, int to) {
        int bytes = 0;
        for (int k = from; k < to; k++) {
            char c = s.charAt(k);
            bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : Character.isSurrogate(c) ? 2 : 3;
        }
        return bytes;
    }
}

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
        int n = s.codePointCount(0, s.length());
        if (n == 0) {
            return;
        }
        int[] start = new int[n];
        int[] end = new int[n];
        int[] prev = new int[n];
        int[] next = new int[n];
        for (int i = 0, off = 0; i < n; i++) {
            start[i] = off;
            off += Character.charCount(s.codePointAt(off));
            end[i] = off;
            prev[i] = i - 1;
            next[i] = i + 1 < n ? i + 1 : -1;
        }
        Session session = new Session(s, start, end);
        for (int i = 1; i < n; i++) {
            session.tryAdd(i - 1, i);
        }
        while (!session.queue.isEmpty()) {
            Bigram b = session.queue.poll();
            int l = b.left;
            int r = b.right;
            if (start[l] == end[l] || start[r] == end[r] || utf8Len(s, l, start, end) + utf8Len(s, r, start, end) != b.size) {
                continue;
            }
            end[l] = end[r];
            start[r] = end[r];
            next[l] = next[r];
            if (next[r] >= 0) {
                prev[next[r]] = l;
            }
            session.tryAdd(prev[l], l);
            session.tryAdd(l, next[l]);
        }
        for (int i = 0; i >= 0; i = next[i]) {
            session.resegment(s.substring(start[i], end[i]), out);
        }
    }

    private static int utf8Len(String s, int i, int[] start, int[] end) {
        return utf8Length(s, start[i], end[i]);
    }

    private static int utf8Length(String s, int from, int to) {
        int bytes = 0;
        for (int k = from; k < to; k++) {
            char c = s.charAt(k);
            bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : Character.isSurrogate(c) ? 2 : 3;
        }
        return bytes;
    }

    /** The state of one encode call: the text, its symbols and the queue. */
    private final class Session {
        final String s;
        final int[] start;
        final int[] end;
        final PriorityQueue<Bigram> queue = new PriorityQueue<>();

        Session(String s, int[] start, int[] end) {
            this.s = s;
            this.start = start;
            this.end = end;
        }

        void tryAdd(int l, int r) {
            if (l < 0 || r < 0) {
                return;
            }
            String text = s.substring(start[l], end[r]);
            int id = vocab.id(text);
            if (id == Vocabulary.NONE) {
                return;
            }
            queue.add(new Bigram(l, r, vocab.scores[id], utf8Length(s, start[l], end[r])));
        }

        void resegment(String text, IntList out) {
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
    }
}

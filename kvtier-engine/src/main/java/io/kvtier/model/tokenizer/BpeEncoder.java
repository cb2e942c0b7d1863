package io.kvtier.model.tokenizer;

import io.kvtier.model.ModelFormatException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;

/**
 * Byte-level BPE as llama.cpp's {@code llm_tokenizer_bpe_session}: each pre-tokenized word is
 * written in GPT-2's byte alphabet, split into characters, and the adjacent pair with the
 * lowest merge rank (leftmost on ties) is merged until no pair has a rank. A priority queue
 * holds the candidate pairs; a popped pair whose sides changed since it was queued is skipped,
 * so a word of n characters costs O(n log n). With {@code ignoreMerges} (the Llama 3
 * pre-tokenizer) a word that is itself a token is emitted whole. A final symbol that is not a
 * token falls back to its single ASCII characters that are (as llama.cpp, other bytes are
 * dropped; a complete byte-level vocabulary never gets there).
 *
 * <p>Immutable and thread-safe.
 */
final class BpeEncoder {

    private final Vocabulary vocab;
    private final PreTokenizer pre;
    private final boolean ignoreMerges;
    /** "left right" (split at the first space after the first character) to rank. */
    private final Map<String, Integer> ranks;

    BpeEncoder(Vocabulary vocab, String[] merges, PreTokenizer pre, boolean ignoreMerges) {
        this.vocab = vocab;
        this.pre = pre;
        this.ignoreMerges = ignoreMerges;
        this.ranks = new HashMap<>(merges.length * 2);
        for (int i = 0; i < merges.length; i++) {
            String m = merges[i];
            int sp = m.indexOf(' ', 1);
            if (sp < 0) {
                throw new ModelFormatException(vocab.file + ": merge " + i + " '" + m + "' has no space between its two parts");
            }
            ranks.putIfAbsent(key(m.substring(0, sp), m.substring(sp + 1)), i);
        }
    }

    /** A pair key; U+0000 cannot occur in a byte-alphabet token (byte 0 is written U+0100). */
    private static String key(String left, String right) {
        return left + '\u0000' + right;
    }

    void encode(String text, IntList out) {
        for (String word : pre.split(text)) {
            encodeWord(ByteAlphabet.encode(word), out);
        }
    }

    private record Pair(int left, int right, String text, int rank) implements Comparable<Pair> {
        @Override
        public int compareTo(Pair o) {
            return rank != o.rank ? Integer.compare(rank, o.rank) : Integer.compare(left, o.left);
        }
    }

    private void encodeWord(String word, IntList out) {
        int whole = vocab.id(word);
        if (ignoreMerges && whole != Vocabulary.NONE) {
            out.add(whole);
            return;
        }
        // Symbols: start/end char offsets into word, linked by prev/next; a merged-away symbol has start == end.
        int n = word.length(); // byte-alphabet chars are all in the BMP: one char per symbol
        int[] start = new int[n];
        int[] end = new int[n];
        int[] prev = new int[n];
        int[] next = new int[n];
        for (int i = 0; i < n; i++) {
            start[i] = i;
            end[i] = i + 1;
            prev[i] = i - 1;
            next[i] = i + 1 < n ? i + 1 : -1;
        }
        PriorityQueue<Pair> queue = new PriorityQueue<>();
        for (int i = 1; i < n; i++) {
            offer(word, queue, i - 1, i, start, end);
        }
        while (!queue.isEmpty()) {
            Pair p = queue.poll();
            int l = p.left;
            int r = p.right;
            if (start[l] == end[l] || start[r] == end[r]) {
                continue;
            }
            // Outdated: a side was merged with something else since this pair was queued.
            if (next[l] != r || end[r] - start[l] != p.text.length() || !word.startsWith(p.text, start[l])) {
                continue;
            }
            end[l] = end[r];
            start[r] = end[r];
            next[l] = next[r];
            if (next[r] >= 0) {
                prev[next[r]] = l;
            }
            if (prev[l] >= 0) offer(word, queue, prev[l], l, start, end);
            if (next[l] >= 0) offer(word, queue, l, next[l], start, end);
        }
        for (int i = 0; i >= 0; i = next[i]) {
            String sym = word.substring(start[i], end[i]);
            int id = vocab.id(sym);
            if (id != Vocabulary.NONE) {
                out.add(id);
                continue;
            }
            for (int k = 0; k < sym.length(); k++) {
                char c = sym.charAt(k);
                int single = c < 0x80 ? vocab.id(String.valueOf(c)) : Vocabulary.NONE;
                if (single != Vocabulary.NONE) out.add(single);
            }
        }
    }

    private void offer(String word, PriorityQueue<Pair> queue, int l, int r, int[] start, int[] end) {
        String left = word.substring(start[l], end[l]);
        String right = word.substring(start[r], end[r]);
        Integer rank = ranks.get(key(left, right));
        if (rank != null) {
            queue.add(new Pair(l, r, left + right, rank));
        }
    }

    /** For tests: the words the pre-tokenizer makes of {@code text}. */
    List<String> words(String text) {
        return pre.split(text);
    }
}

package io.kvtier.model.tokenizer;

import io.kvtier.model.ModelFormatException;
import java.util.List;
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
    /**
     * The merge text "left right" to its rank. The file's strings are the keys as they are: byte-level
     * symbols never hold U+0020 (a space is written U+0120), so "left right" names one pair.
     */
    private final StringIntMap ranks;

    BpeEncoder(Vocabulary vocab, String[] merges, PreTokenizer pre, boolean ignoreMerges) {
        this.vocab = vocab;
        this.pre = pre;
        this.ignoreMerges = ignoreMerges;
        this.ranks = new StringIntMap(merges.length);
        for (int i = 0; i < merges.length; i++) {
            String m = merges[i];
            int sp = m.indexOf(' ', 1);
            if (sp < 0) {
                throw new ModelFormatException(vocab.file + ": merge " + i + " '" + m + "' has no space between its two parts");
            }
            ranks.putIfAbsent(m, i);
        }
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
        SymbolChain c = new SymbolChain(word); // byte-alphabet chars are all in the BMP: one char per symbol
        PriorityQueue<Pair> queue = new PriorityQueue<>();
        for (int i = 1; i < c.size(); i++) {
            offer(c, queue, i - 1, i);
        }
        while (!queue.isEmpty()) {
            Pair p = queue.poll();
            int l = p.left;
            int r = p.right;
            // Outdated: a side was merged with something else since this pair was queued.
            if (c.isEmpty(l) || c.isEmpty(r) || c.next[l] != r || !c.pair(l, r).equals(p.text)) {
                continue;
            }
            c.merge(l, r);
            if (c.prev[l] >= 0) offer(c, queue, c.prev[l], l);
            if (c.next[l] >= 0) offer(c, queue, l, c.next[l]);
        }
        for (int i = 0; i >= 0; i = c.next[i]) {
            String sym = c.symbol(i);
            int id = vocab.id(sym);
            if (id != Vocabulary.NONE) {
                out.add(id);
                continue;
            }
            for (int k = 0; k < sym.length(); k++) {
                char ch = sym.charAt(k);
                int single = ch < 0x80 ? vocab.id(String.valueOf(ch)) : Vocabulary.NONE;
                if (single != Vocabulary.NONE) out.add(single);
            }
        }
    }

    private void offer(SymbolChain c, PriorityQueue<Pair> queue, int l, int r) {
        String left = c.symbol(l);
        String right = c.symbol(r);
        int rank = ranks.get(left + ' ' + right);
        if (rank != StringIntMap.ABSENT) {
            queue.add(new Pair(l, r, left + right, rank));
        }
    }

    /** For tests: the words the pre-tokenizer makes of {@code text}. */
    List<String> words(String text) {
        return pre.split(text);
    }
}

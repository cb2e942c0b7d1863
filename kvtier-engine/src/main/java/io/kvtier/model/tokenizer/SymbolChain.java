package io.kvtier.model.tokenizer;

/**
 * The symbols of one merge loop (llama.cpp's {@code llm_symbol} list): symbol i covers chars
 * {@code start[i]..end[i]} of the text, linked to its neighbours by {@code prev} / {@code next}
 * (-1 at the ends). Merging moves the right symbol into the left one and empties it, so a merged
 * pair costs O(1) and a stale queued pair is recognised by an empty side.
 */
final class SymbolChain {

    final String text;
    final int[] start;
    final int[] end;
    final int[] prev;
    final int[] next;

    /** One symbol per code point of {@code text}. */
    SymbolChain(String text) {
        this.text = text;
        int n = text.codePointCount(0, text.length());
        start = new int[n];
        end = new int[n];
        prev = new int[n];
        next = new int[n];
        for (int i = 0, off = 0; i < n; i++) {
            start[i] = off;
            off += Character.charCount(text.codePointAt(off));
            end[i] = off;
            prev[i] = i - 1;
            next[i] = i + 1 < n ? i + 1 : -1;
        }
    }

    int size() {
        return start.length;
    }

    boolean isEmpty(int i) {
        return start[i] == end[i];
    }

    String symbol(int i) {
        return text.substring(start[i], end[i]);
    }

    /** Symbol {@code l} followed by its right neighbour {@code r}, as one string. */
    String pair(int l, int r) {
        return text.substring(start[l], end[r]);
    }

    /** Moves {@code r} (the right neighbour of {@code l}) into {@code l}. */
    void merge(int l, int r) {
        end[l] = end[r];
        start[r] = end[r];
        next[l] = next[r];
        if (next[r] >= 0) {
            prev[next[r]] = l;
        }
    }
}

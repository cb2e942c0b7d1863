package io.kvtier.model.tokenizer;

import java.util.Arrays;

/** A growable int array (token ids) without boxing. */
final class IntList {

    private int[] a = new int[16];
    private int n;

    void add(int x) {
        if (n == a.length) {
            a = Arrays.copyOf(a, n * 2);
        }
        a[n++] = x;
    }

    int size() {
        return n;
    }

    int get(int i) {
        return a[i];
    }

    int[] toArray() {
        return Arrays.copyOf(a, n);
    }
}

package io.kvtier.replay.optimum;

import java.util.Arrays;

/**
 * Binary max-heap of ids {@code 0..n-1} keyed by int, with each id's position tracked so that
 * its key can be changed or the id removed in O(log size). No boxing, no allocation after
 * construction.
 */
final class IndexedMaxHeap {

    private final int[] heap;
    private final int[] pos;
    private final int[] key;
    private int size;

    IndexedMaxHeap(int ids) {
        heap = new int[ids];
        pos = new int[ids];
        key = new int[ids];
        Arrays.fill(pos, -1);
    }

    int size() {
        return size;
    }

    boolean contains(int id) {
        return pos[id] >= 0;
    }

    /** Id with the largest key; the heap must not be empty. */
    int peek() {
        return heap[0];
    }

    int keyOf(int id) {
        return key[id];
    }

    void insert(int id, int k) {
        key[id] = k;
        heap[size] = id;
        pos[id] = size;
        siftUp(size++);
    }

    /** Sets the key of a contained id. */
    void update(int id, int k) {
        int old = key[id];
        key[id] = k;
        if (k > old) {
            siftUp(pos[id]);
        } else if (k < old) {
            siftDown(pos[id]);
        }
    }

    /** Removes and returns the id with the largest key. */
    int poll() {
        int top = heap[0];
        size--;
        pos[top] = -1;
        if (size > 0) {
            int last = heap[size];
            heap[0] = last;
            pos[last] = 0;
            siftDown(0);
        }
        return top;
    }

    private void siftUp(int i) {
        int id = heap[i];
        int k = key[id];
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            int p = heap[parent];
            if (key[p] >= k) {
                break;
            }
            heap[i] = p;
            pos[p] = i;
            i = parent;
        }
        heap[i] = id;
        pos[id] = i;
    }

    private void siftDown(int i) {
        int id = heap[i];
        int k = key[id];
        int half = size >>> 1;
        while (i < half) {
            int child = 2 * i + 1;
            int right = child + 1;
            if (right < size && key[heap[right]] > key[heap[child]]) {
                child = right;
            }
            int c = heap[child];
            if (k >= key[c]) {
                break;
            }
            heap[i] = c;
            pos[c] = i;
            i = child;
        }
        heap[i] = id;
        pos[id] = i;
    }
}

package io.kvtier.offload;

import java.util.Arrays;

/**
 * A map from {@code long} keys to {@code int} values that allocates nothing on lookups and on
 * updates of present keys (no boxing): the offload scheduler looks up every running request's
 * store cursor at every step. Open addressing with linear probing; removal shifts the following
 * entries back, so lookups never meet a tombstone. Not thread-safe.
 */
final class LongIntMap {

    private long[] keys;
    private int[] values;
    private boolean[] used;
    private int size;

    LongIntMap() {
        this(16);
    }

    /** @param capacity initial slots, rounded up to a power of two (at least 2) */
    LongIntMap(int capacity) {
        int n = Integer.highestOneBit(Math.max(2, capacity - 1)) << 1;
        keys = new long[n];
        values = new int[n];
        used = new boolean[n];
    }

    int size() {
        return size;
    }

    /** The value of {@code key}, or {@code absent} when it has none. */
    int get(long key, int absent) {
        int i = find(key);
        return i < 0 ? absent : values[i];
    }

    boolean containsKey(long key) {
        return find(key) >= 0;
    }

    void put(long key, int value) {
        int mask = keys.length - 1;
        for (int i = slot(key, mask); ; i = (i + 1) & mask) {
            if (!used[i]) {
                used[i] = true;
                keys[i] = key;
                values[i] = value;
                if (++size * 4 > keys.length * 3) {
                    grow();
                }
                return;
            }
            if (keys[i] == key) {
                values[i] = value;
                return;
            }
        }
    }

    /** Removes {@code key}; true if it was present. */
    boolean remove(long key) {
        int i = find(key);
        if (i < 0) {
            return false;
        }
        int mask = keys.length - 1;
        // Backward-shift deletion: move later entries of the run into the hole when their home
        // slot does not lie (cyclically) after the hole.
        for (int j = (i + 1) & mask; used[j]; j = (j + 1) & mask) {
            int home = slot(keys[j], mask);
            if (((j - home) & mask) >= ((j - i) & mask)) {
                keys[i] = keys[j];
                values[i] = values[j];
                i = j;
            }
        }
        used[i] = false;
        size--;
        return true;
    }

    void clear() {
        Arrays.fill(used, false);
        size = 0;
    }

    private int find(long key) {
        int mask = keys.length - 1;
        for (int i = slot(key, mask); used[i]; i = (i + 1) & mask) {
            if (keys[i] == key) {
                return i;
            }
        }
        return -1;
    }

    private static int slot(long key, int mask) {
        return (int) ((key * 0x9E3779B97F4A7C15L) >>> 32) & mask; // Fibonacci hashing
    }

    private void grow() {
        long[] oldKeys = keys;
        int[] oldValues = values;
        boolean[] oldUsed = used;
        keys = new long[oldKeys.length * 2];
        values = new int[oldKeys.length * 2];
        used = new boolean[oldKeys.length * 2];
        size = 0;
        for (int i = 0; i < oldKeys.length; i++) {
            if (oldUsed[i]) {
                put(oldKeys[i], oldValues[i]);
            }
        }
    }
}

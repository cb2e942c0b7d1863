package io.kvtier.model.tokenizer;

/**
 * A String to int map with open addressing (linear probing), for the tables a tokenizer builds
 * at load: 150k token texts, 280k merge ranks. A {@code HashMap<String, Integer>} allocates a
 * node and (above 127) an Integer per entry; this holds two arrays. Insert-only.
 */
final class StringIntMap {

    /** Returned by {@link #get} for an absent key. */
    static final int ABSENT = Integer.MIN_VALUE;

    private final String[] keys;
    private final int[] values;
    private final int mask;
    private final int shift;

    /** A map for at most {@code capacity} keys (the table is kept at most half full). */
    StringIntMap(int capacity) {
        int size = Integer.highestOneBit(Math.max(4, capacity) * 2 - 1) << 1;
        keys = new String[size];
        values = new int[size];
        mask = size - 1;
        shift = 32 - Integer.numberOfTrailingZeros(size);
    }

    /**
     * Fibonacci hashing: the top bits of hash × 2^32/φ. String hashes of similar texts are
     * consecutive ("[PAD151650]", "[PAD151651]" ...); taken modulo the size they would fill
     * runs of adjacent slots that linear probing then walks end to end.
     */
    private int slot(String key) {
        return (key.hashCode() * 0x9E3779B9) >>> shift;
    }

    /** Adds {@code key → value} unless {@code key} is present; returns the value it already had, or {@link #ABSENT}. */
    int putIfAbsent(String key, int value) {
        for (int s = slot(key); ; s = (s + 1) & mask) {
            String k = keys[s];
            if (k == null) {
                keys[s] = key;
                values[s] = value;
                return ABSENT;
            }
            if (k.equals(key)) {
                return values[s];
            }
        }
    }

    /** The value of {@code key}, or {@link #ABSENT}. */
    int get(String key) {
        for (int s = slot(key); ; s = (s + 1) & mask) {
            String k = keys[s];
            if (k == null) {
                return ABSENT;
            }
            if (k.equals(key)) {
                return values[s];
            }
        }
    }
}

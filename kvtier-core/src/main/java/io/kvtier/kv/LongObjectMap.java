package io.kvtier.kv;

import java.util.Arrays;
import java.util.function.Consumer;

/**
 * A map from {@code long} keys (request ids) to objects that boxes nothing: lookups, updates and
 * removals allocate nothing (only growing the table does). The engine looks up every running
 * request's block table several times a step, where a {@code HashMap<Long, ?>} allocates a
 * {@code Long} per lookup for ids outside the JDK's small cache. Open addressing with linear
 * probing; removal shifts the following entries back, so lookups never meet a tombstone.
 * Iteration order is unspecified. Not thread-safe.
 *
 * @param <V> values; null is not a value (it means absent)
 */
public final class LongObjectMap<V> {

    /** Receives an entry of {@link #forEach(EntryConsumer)}. */
    @FunctionalInterface
    public interface EntryConsumer<V> {
        void accept(long key, V value);
    }

    private long[] keys;
    private Object[] values;   // null: a free slot
    private int size;

    public LongObjectMap() {
        keys = new long[16];
        values = new Object[16];
    }

    public int size() {
        return size;
    }

    public boolean isEmpty() {
        return size == 0;
    }

    /** The value of {@code key}, or null. */
    @SuppressWarnings("unchecked")
    public V get(long key) {
        int i = find(key);
        return i < 0 ? null : (V) values[i];
    }

    public boolean containsKey(long key) {
        return find(key) >= 0;
    }

    /**
     * Maps {@code key} to {@code value}; returns the previous value or null.
     *
     * @throws NullPointerException if {@code value} is null
     */
    @SuppressWarnings("unchecked")
    public V put(long key, V value) {
        if (value == null) {
            throw new NullPointerException("value");
        }
        int mask = keys.length - 1;
        for (int i = slot(key, mask); ; i = (i + 1) & mask) {
            if (values[i] == null) {
                keys[i] = key;
                values[i] = value;
                if (++size * 4 > keys.length * 3) {
                    grow();
                }
                return null;
            }
            if (keys[i] == key) {
                V old = (V) values[i];
                values[i] = value;
                return old;
            }
        }
    }

    /** Removes {@code key}; returns its value, or null if it had none. */
    @SuppressWarnings("unchecked")
    public V remove(long key) {
        int i = find(key);
        if (i < 0) {
            return null;
        }
        V old = (V) values[i];
        int mask = keys.length - 1;
        // Backward-shift deletion: move later entries of the run into the hole when their home
        // slot does not lie (cyclically) after the hole.
        for (int j = (i + 1) & mask; values[j] != null; j = (j + 1) & mask) {
            int home = slot(keys[j], mask);
            if (((j - home) & mask) >= ((j - i) & mask)) {
                keys[i] = keys[j];
                values[i] = values[j];
                i = j;
            }
        }
        values[i] = null;
        size--;
        return old;
    }

    public void clear() {
        Arrays.fill(values, null);
        size = 0;
    }

    /** Every entry, in no particular order; the map must not change meanwhile. */
    @SuppressWarnings("unchecked")
    public void forEach(EntryConsumer<? super V> action) {
        for (int i = 0; i < keys.length; i++) {
            if (values[i] != null) {
                action.accept(keys[i], (V) values[i]);
            }
        }
    }

    /** Every value, in no particular order; the map must not change meanwhile. */
    public void forEachValue(Consumer<? super V> action) {
        forEach((k, v) -> action.accept(v));
    }

    private int find(long key) {
        int mask = keys.length - 1;
        for (int i = slot(key, mask); values[i] != null; i = (i + 1) & mask) {
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
        Object[] oldValues = values;
        keys = new long[oldKeys.length * 2];
        values = new Object[oldKeys.length * 2];
        size = 0;
        for (int i = 0; i < oldKeys.length; i++) {
            if (oldValues[i] != null) {
                put(oldKeys[i], uncheckedCast(oldValues[i]));
            }
        }
    }

    @SuppressWarnings("unchecked")
    private V uncheckedCast(Object o) {
        return (V) o;
    }
}

package io.kvtier.offload;

import io.kvtier.kv.LongObjectMap;

/**
 * A map from {@code long} keys to {@code int} values that allocates nothing on lookups and on
 * updates of present keys (no boxing): the offload scheduler looks up every running request's
 * store cursor at every step. Each value is a one-element array held by a {@link LongObjectMap}
 * and updated in place, so only a new key allocates. Not thread-safe.
 */
final class LongIntMap {

    private final LongObjectMap<int[]> map = new LongObjectMap<>();

    int size() {
        return map.size();
    }

    /** The value of {@code key}, or {@code absent} when it has none. */
    int get(long key, int absent) {
        int[] cell = map.get(key);
        return cell == null ? absent : cell[0];
    }

    boolean containsKey(long key) {
        return map.containsKey(key);
    }

    void put(long key, int value) {
        int[] cell = map.get(key);
        if (cell == null) {
            map.put(key, new int[] {value});
        } else {
            cell[0] = value;
        }
    }

    /** Removes {@code key}; true if it was present. */
    boolean remove(long key) {
        return map.remove(key) != null;
    }

    void clear() {
        map.clear();
    }
}

package io.kvtier.offload;

import io.kvtier.tier.HostTier;
import java.util.Collections;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Counters by tier name, {@code width} longs per tier, for the counts a job's completion adds to
 * (blocks stored or loaded; a direction's jobs, bytes and time). kvtier's three tiers ({@code host},
 * {@code disk}, {@code remote}) have fixed slots in one array, so a completion adds to a long: no
 * map node to find, no boxed value or record to allocate. On a small model a map's cold nodes cost
 * a stored chunk microseconds after each forward pass (issue 16, docs/measurements.md). Any other
 * tier name gets slots when first seen. Engine thread only.
 */
final class TierCounts {

    /** The tiers with slots from the start, in slot order. */
    private static final String[] KNOWN = {HostTier.NAME, "disk", "remote"};

    private final int width;
    private String[] names = KNOWN.clone();
    private long[] values;

    /** @param width counters per tier (> 0) */
    TierCounts(int width) {
        this.width = width;
        this.values = new long[KNOWN.length * width];
    }

    /** Adds {@code n} to counter 0 of {@code tier}. */
    void add(String tier, long n) {
        int s = slot(tier) * width; // first: a new tier replaces the array
        values[s] += n;
    }

    /** Adds one to counter 0 of {@code tier} and {@code a}, {@code b} to its counters 1 and 2 (a job: count, bytes, ns; width 3). */
    void addJob(String tier, long a, long b) {
        int s = slot(tier) * width;
        values[s]++;
        values[s + 1] += a;
        values[s + 2] += b;
    }

    /** Adds every counter of {@code o} (of the same width) to this one's. */
    void addAll(TierCounts o) {
        for (int s = 0; s < o.names.length; s++) {
            int mine = slot(o.names[s]) * width;
            for (int i = 0; i < width; i++) {
                values[mine + i] += o.values[s * width + i];
            }
        }
    }

    /**
     * The tiers whose counter 0 is not 0, in name order, each mapped by {@code value} from its
     * counters. A new, unmodifiable map.
     */
    <V> SortedMap<String, V> toMap(Values<V> value) {
        SortedMap<String, V> m = new TreeMap<>();
        for (int s = 0; s < names.length; s++) {
            if (values[s * width] != 0) {
                m.put(names[s], value.of(values, s * width));
            }
        }
        return Collections.unmodifiableSortedMap(m);
    }

    /** Counter 0 of each tier where it is not 0, in name order. */
    SortedMap<String, Long> toMap() {
        return toMap((v, at) -> v[at]);
    }

    /** Builds a map value from a tier's counters {@code v[at, at + width)}. */
    @FunctionalInterface
    interface Values<V> {
        V of(long[] v, int at);
    }

    /** The tiers with counter 0 not 0, in name order, with their counters: {@code {host=[3, 30, 300]}}. */
    @Override
    public String toString() {
        return toMap((v, at) -> java.util.Arrays.toString(java.util.Arrays.copyOfRange(v, at, at + width))).toString();
    }

    /** The slot of {@code tier}: the literal tier names hit the identity test, others the equality one. */
    private int slot(String tier) {
        for (int s = 0; s < names.length; s++) {
            if (names[s] == tier) {
                return s;
            }
        }
        for (int s = 0; s < names.length; s++) {
            if (names[s].equals(tier)) {
                return s;
            }
        }
        names = java.util.Arrays.copyOf(names, names.length + 1);
        names[names.length - 1] = tier;
        values = java.util.Arrays.copyOf(values, names.length * width);
        return names.length - 1;
    }
}

package io.kvtier.tier;

import io.kvtier.kv.BlockKey;
import java.util.BitSet;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;

/**
 * The entry table of one {@link TierIndex}: which key holds which slot, in what state, and the
 * counts of storing and pinned entries, kept equal to the entries by construction (every state
 * change goes through a method here). No policy, no events: those are {@link TierIndex}'s.
 * Engine thread only.
 */
final class TierEntries {

    /** One key's entry; its fields change only through {@link TierEntries}' methods (and {@code doomed}). */
    static final class Entry {
        final BlockKey key;
        final BlockKey parent;
        final int slot;
        private boolean ready;
        private int pins;
        /** Invisible, to be dropped when the transfer using its slot completes. */
        boolean doomed;

        private Entry(BlockKey key, BlockKey parent, int slot) {
            this.key = key;
            this.parent = parent;
            this.slot = slot;
        }

        boolean ready() {
            return ready;
        }

        int pins() {
            return pins;
        }

        boolean readable() {
            return ready && !doomed;
        }

        /** READY, unpinned and not doomed: a candidate victim. */
        boolean evictable() {
            return ready && pins == 0 && !doomed;
        }
    }

    private final int capacity;
    private final Map<BlockKey, Entry> entries = new HashMap<>();
    private final BitSet usedSlots;
    private int storing;
    private int pinned;

    TierEntries(int capacity) {
        this.capacity = capacity;
        this.usedSlots = new BitSet(capacity);
    }

    Entry get(BlockKey key) {
        return entries.get(key);
    }

    Collection<Entry> all() {
        return entries.values();
    }

    int size() {
        return entries.size();
    }

    int freeSlots() {
        return capacity - entries.size();
    }

    int storing() {
        return storing;
    }

    int pinned() {
        return pinned;
    }

    /** A new STORING entry in the lowest free slot; the caller checked there is one. */
    Entry addStoring(BlockKey key, BlockKey parent) {
        int slot = usedSlots.nextClearBit(0);
        usedSlots.set(slot);
        Entry e = new Entry(key, parent, slot);
        entries.put(key, e);
        storing++;
        return e;
    }

    /** Ends a STORING entry: READY if {@code keep}, else dropped. */
    void storeEnded(Entry e, boolean keep) {
        storing--;
        if (keep) {
            e.ready = true;
        } else {
            drop(e);
        }
    }

    void pin(Entry e) {
        if (e.pins++ == 0) {
            pinned++;
        }
    }

    /** @return whether that was the last pin */
    boolean unpin(Entry e) {
        if (--e.pins == 0) {
            pinned--;
            return true;
        }
        return false;
    }

    void drop(Entry e) {
        entries.remove(e.key);
        usedSlots.clear(e.slot);
    }

    /** State of a key. */
    TierIndex.EntryState state(BlockKey key) {
        Entry e = entries.get(key);
        if (e == null) {
            return TierIndex.EntryState.ABSENT;
        }
        if (e.doomed) {
            return TierIndex.EntryState.REMOVING;
        }
        if (!e.ready) {
            return TierIndex.EntryState.STORING;
        }
        return e.pins > 0 ? TierIndex.EntryState.LOADING : TierIndex.EntryState.READY;
    }

    /** A broken invariant: its name and what was seen. */
    record Broken(String invariant, String detail) {
    }

    /**
     * The first broken invariant of the table, or null: every entry has its own slot in range;
     * free + used = capacity; storing entries are not pinned; entries waiting for removal are in
     * flight; the counters match the entries; the policy's members are exactly the readable entries.
     */
    Broken check(CachePolicy policy) {
        BitSet seen = new BitSet(capacity);
        int countStoring = 0;
        int countPinned = 0;
        int countReadable = 0;
        for (Entry e : entries.values()) {
            if (e.slot < 0 || e.slot >= capacity) {
                return new Broken("slot in range", "key " + e.key.shortHex() + " has slot " + e.slot);
            }
            if (seen.get(e.slot)) {
                return new Broken("slots unique", "slot " + e.slot + " is held by two entries");
            }
            seen.set(e.slot);
            if (e.pins < 0) {
                return new Broken("pins >= 0", "key " + e.key.shortHex() + " has " + e.pins + " pins");
            }
            if (!e.ready) {
                countStoring++;
                if (e.pins != 0) {
                    return new Broken("storing entries are not pinned", "key " + e.key.shortHex() + " has " + e.pins + " pins");
                }
            } else if (e.pins > 0) {
                countPinned++;
            }
            if (e.doomed && e.ready && e.pins == 0) {
                return new Broken("removing entries are in flight", "key " + e.key.shortHex() + " is removing but unpinned");
            }
            if (e.readable()) {
                countReadable++;
            }
            if (e.readable() != policy.contains(e.key)) {
                return new Broken("policy members = readable entries", "key " + e.key.shortHex() + " is " + state(e.key)
                        + " but policy membership is " + policy.contains(e.key));
            }
        }
        if (!seen.equals(usedSlots)) {
            return new Broken("used slots = slots of entries", "used " + usedSlots + ", entries hold " + seen);
        }
        if (freeSlots() + entries.size() != capacity || freeSlots() < 0) {
            return new Broken("free + used = capacity", freeSlots() + " + " + entries.size() + " != " + capacity);
        }
        if (countStoring != storing) {
            return new Broken("storing count", "counter " + storing + ", entries " + countStoring);
        }
        if (countPinned != pinned) {
            return new Broken("pinned count", "counter " + pinned + ", entries " + countPinned);
        }
        if (countReadable != policy.size()) {
            return new Broken("policy size = readable entries", "policy " + policy.size() + ", readable " + countReadable);
        }
        return null;
    }
}

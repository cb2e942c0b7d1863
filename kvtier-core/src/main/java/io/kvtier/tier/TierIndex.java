package io.kvtier.tier;

import io.kvtier.kv.BlockKey;
import io.kvtier.tier.TierEntries.Entry;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The bookkeeping of one tier: which chunk key lives in which slot and in what state. It never
 * touches bytes; the data path reads and writes the slots it hands out. Engine thread only: no
 * locks.
 *
 * <p>Entry life: {@code prepareStore} creates it STORING (invisible to lookups, never evicted);
 * {@code completeStore(true)} makes it READY (readable, a member of the {@link CachePolicy});
 * {@code prepareLoad} pins it (LOADING: still readable, never evicted) and {@code completeLoad}
 * unpins it; a READY unpinned entry may be evicted by a later store. An entry that must go while
 * a transfer still uses its slot ({@link #remove} of a pinned entry, {@link #clear} with transfers
 * in flight) becomes REMOVING: invisible at once, its slot freed when the transfer completes.
 *
 * <p>Events ({@link KvEvents}) describe the resident set, the keys a lookup can hit:
 * {@code BlockStored} when a store completes successfully; {@code BlockRemoved} when readable
 * keys are evicted or {@link #remove}d; {@code AllCleared} when {@link #clear} drops at least one
 * readable key. A failed or discarded store emits nothing: its keys were never announced, so
 * there is nothing to take back. Each key appears once per change.
 *
 * <p>Counts: {@code freeSlots() + readyCount() + pinnedCount() + storingCount() == capacity()}.
 */
public final class TierIndex {

    /** State of one key, for tests and diagnostics. */
    public enum EntryState {
        /** No entry. */
        ABSENT,
        /** Being stored: invisible to lookups. */
        STORING,
        /** Readable, no transfer reads it. */
        READY,
        /** Readable, pinned by at least one load. */
        LOADING,
        /** Invisible, waiting for a transfer that uses its slot to complete. */
        REMOVING
    }

    /** Key lists up to this long are searched, not hashed: a step stores one chunk per request. */
    private static final int SHORT_LIST = 8;

    private final String tierName;
    private final int capacity;
    private final CachePolicy policy;
    private final KvEvents events;
    private final TierEntries entries;
    private long refusedStores;
    private long evictions;

    /**
     * @param tierName       name used in events and messages ({@code "host"}, {@code "disk"}, ...)
     * @param capacityChunks number of slots (> 0)
     * @param policy         a fresh policy, used by this tier only
     * @param events         where resident-set changes are reported
     */
    public TierIndex(String tierName, int capacityChunks, CachePolicy policy, KvEvents events) {
        if (capacityChunks <= 0) {
            throw new IllegalArgumentException("tier " + tierName + ": capacity must be positive, got " + capacityChunks);
        }
        this.tierName = Objects.requireNonNull(tierName, "tierName");
        this.capacity = capacityChunks;
        this.policy = Objects.requireNonNull(policy, "policy");
        this.events = Objects.requireNonNull(events, "events");
        if (policy.size() != 0) {
            throw new IllegalArgumentException("tier " + tierName + ": policy must be empty, has " + policy.size());
        }
        this.entries = new TierEntries(capacityChunks);
    }

    /**
     * Counts the leading keys that are readable (READY or LOADING). Does not change recency.
     *
     * @param chunkKeys a chain of chunk keys, head first
     */
    public TierLookup lookup(List<BlockKey> chunkKeys) {
        int n = 0;
        for (BlockKey k : chunkKeys) {
            Entry e = entries.get(k);
            if (e == null || e.doomed) {
                break;
            }
            if (!e.ready()) {
                return new TierLookup.Pending(n);
            }
            n++;
        }
        return n == 0 ? new TierLookup.Miss() : new TierLookup.Hit(n);
    }

    /** Records an access to the readable keys among {@code chunkKeys} (tail-first, see {@link CachePolicy}). */
    public void touch(List<BlockKey> chunkKeys) {
        policy.touch(chunkKeys);
    }

    /**
     * Pins readable entries for a load and returns their slots, parallel to {@code chunkKeys}.
     * Call {@link #completeLoad} with the same keys when the load finished (successfully or not).
     *
     * @throws IllegalStateException if a key is not readable (nothing is pinned then)
     */
    public int[] prepareLoad(List<BlockKey> chunkKeys) {
        int[] slots = new int[chunkKeys.size()];
        for (int i = 0; i < slots.length; i++) {
            Entry e = entries.get(chunkKeys.get(i));
            if (e == null || !e.readable()) {
                throw new IllegalStateException("tier " + tierName + ": prepareLoad of key " + chunkKeys.get(i).shortHex()
                        + " (#" + i + ") which is " + state(chunkKeys.get(i)) + ", not readable");
            }
            slots[i] = e.slot;
        }
        for (BlockKey k : chunkKeys) {
            entries.pin(entries.get(k));
        }
        return slots;
    }

    /**
     * Unpins entries pinned by {@link #prepareLoad}. An entry marked for removal while pinned is
     * removed (its slot freed) when its last pin goes.
     *
     * @throws IllegalStateException if a key is not pinned (nothing is unpinned then)
     */
    public void completeLoad(List<BlockKey> chunkKeys) {
        Map<BlockKey, Integer> unpins = new HashMap<>();
        for (BlockKey k : chunkKeys) {
            Entry e = entries.get(k);
            int want = unpins.merge(k, 1, Integer::sum);
            if (e == null || e.pins() < want) {
                throw new IllegalStateException("tier " + tierName + ": completeLoad of key " + k.shortHex()
                        + " which is " + state(k) + " and not pinned by a load");
            }
        }
        for (BlockKey k : chunkKeys) {
            Entry e = entries.get(k);
            if (entries.unpin(e) && e.doomed) {
                entries.drop(e);
            }
        }
    }

    /**
     * Plans a store of a chain of chunks. Keys already readable are skipped and touched; keys
     * being stored by another job are skipped. The others get slots; when there are not enough
     * free slots, READY unpinned entries not among {@code keys} are evicted in policy order. All or
     * nothing: if not enough can be evicted, or the chain needs more slots than the tier has, or a
     * key is being removed, nothing changes and the answer is {@link StorePlan.Refused} (counted in
     * {@link #refusedStores()}).
     *
     * @param keys    chunk keys, head first, without duplicates
     * @param parents parent key of each chunk (the key of the chunk before it, or the namespace
     *                seed for the first chunk of a sequence), parallel to {@code keys}
     */
    public StorePlan prepareStore(List<BlockKey> keys, List<BlockKey> parents) {
        return prepareStore(keys, parents, Set.of());
    }

    /**
     * As {@link #prepareStore(List, List)}, and never evicting {@code keep} either: the chunks
     * before {@code keys} in the same chain (a store after its parents' eviction would leave a
     * hole, and a chain with a hole can only be hit up to the hole).
     */
    public StorePlan prepareStore(List<BlockKey> keys, List<BlockKey> parents, Set<BlockKey> keep) {
        if (keys.size() != parents.size()) {
            throw new IllegalArgumentException("tier " + tierName + ": " + keys.size() + " keys but " + parents.size() + " parents");
        }
        Collection<BlockKey> keySet = distinct(keys, "a store");
        List<BlockKey> present = List.of(); // made when a key is present: a decode store's chunk is new
        List<BlockKey> toStore = new ArrayList<>(keys.size());
        List<BlockKey> toStoreParents = new ArrayList<>(keys.size());
        for (int i = 0; i < keys.size(); i++) {
            BlockKey k = Objects.requireNonNull(keys.get(i), "key");
            Entry e = entries.get(k);
            if (e == null) {
                toStore.add(k);
                toStoreParents.add(Objects.requireNonNull(parents.get(i), "parent"));
            } else if (e.doomed) {
                return refuse("key " + k.shortHex() + " is being removed; retry when its transfer completes");
            } else if (e.ready()) {
                if (present.isEmpty()) {
                    present = new ArrayList<>();
                }
                present.add(k);
            } // else: being stored by another job, skip
        }
        if (toStore.size() > capacity) {
            return refuse("store of " + toStore.size() + " chunks exceeds the tier capacity of " + capacity);
        }
        int need = toStore.size() - freeSlots();
        List<BlockKey> victims = List.of();
        if (need > 0) {
            victims = policy.victims(need, k -> !keySet.contains(k) && !keep.contains(k) && evictable(k));
            if (victims.size() < need) {
                return refuse("tier full: " + toStore.size() + " chunks to store, " + freeSlots() + " free slots, "
                        + victims.size() + " evictable entries");
            }
            for (BlockKey v : victims) {
                Entry e = entries.get(v);
                if (e == null || !evictable(v) || keySet.contains(v) || keep.contains(v)) {
                    throw new IllegalStateException("tier " + tierName + ": policy " + policy.name()
                            + " offered victim " + v.shortHex() + " which is " + state(v));
                }
            }
            for (BlockKey v : victims) {
                policy.evicted(v);
                entries.drop(entries.get(v));
            }
            evictions += victims.size();
            events.removed(victims, tierName);
        }
        int[] slots = new int[toStore.size()];
        for (int i = 0; i < slots.length; i++) {
            slots[i] = entries.addStoring(toStore.get(i), toStoreParents.get(i)).slot;
        }
        policy.touch(present);
        return new StorePlan.Accepted(toStore, slots, victims);
    }

    /**
     * {@code keys} as a collection for {@code contains}: the list itself when short (a linear
     * search of a few keys beats hashing them into a new set, which a store did per call), else a
     * set.
     *
     * @throws IllegalArgumentException if a key is listed twice ({@code what} names the call)
     */
    private Collection<BlockKey> distinct(List<BlockKey> keys, String what) {
        if (keys.size() > SHORT_LIST) {
            Set<BlockKey> set = new HashSet<>(keys);
            if (set.size() == keys.size()) {
                return set;
            }
        } else if (!hasDuplicate(keys)) {
            return keys;
        }
        throw new IllegalArgumentException("tier " + tierName + ": duplicate keys in " + what + " of " + keys.size());
    }

    private static boolean hasDuplicate(List<BlockKey> keys) {
        for (int i = 1; i < keys.size(); i++) {
            for (int j = 0; j < i; j++) {
                if (keys.get(i).equals(keys.get(j))) {
                    return true;
                }
            }
        }
        return false;
    }

    private StorePlan refuse(String reason) {
        refusedStores++;
        return new StorePlan.Refused("tier " + tierName + ": " + reason);
    }

    /**
     * How many leading keys of a chain {@link #prepareStore(List, List, Set)} would accept now:
     * the longest prefix {@code keys[0, n)} whose absent keys fit in the free slots plus the
     * entries evictable outside that prefix and {@code keep}; it ends before a key being
     * removed. Lets a caller store (or promote) the part of a chain that fits, parents first,
     * instead of nothing. No side effects.
     */
    public int fittingPrefix(List<BlockKey> keys, Set<BlockKey> keep) {
        // First as if every kept key were evictable (room at its lowest): when all keys fit even
        // so, the answer is exact without walking keep, which holds a request's every earlier
        // chunk (walking it at each store made a long chain's stores quadratic).
        int sure = fittingPrefix(keys, keep, freeSlots() + readyCount() - keep.size());
        if (sure == keys.size()) {
            return sure;
        }
        int room = freeSlots() + readyCount();
        for (BlockKey k : keep) {
            if (evictable(k)) {
                room--;
            }
        }
        return fittingPrefix(keys, keep, room);
    }

    /** {@link #fittingPrefix(List, Set)} with {@code room} slots free or evictable outside {@code keep}. */
    private int fittingPrefix(List<BlockKey> keys, Set<BlockKey> keep, int room) {
        int need = 0;
        for (int i = 0; i < keys.size(); i++) {
            Entry e = entries.get(keys.get(i));
            if (e == null) {
                need++;
            } else if (e.doomed) {
                return i;
            } else if (evictable(e.key) && !keep.contains(e.key)) {
                room--; // present: no slot needed, but no longer a victim either
            }
            if (need > room) {
                return i;
            }
        }
        return keys.size();
    }

    /**
     * The entries a {@link #prepareStore} of {@code keys} would evict now, in eviction order,
     * without changing anything (empty if it needs no eviction or would be refused). Lets a
     * caller save those entries elsewhere first (the disk tier's write-on-evict policy).
     */
    public List<BlockKey> plannedVictims(List<BlockKey> keys) {
        return plannedVictims(keys, Set.of());
    }

    /** As {@link #plannedVictims(List)} for {@link #prepareStore(List, List, Set)} with {@code keep}. */
    public List<BlockKey> plannedVictims(List<BlockKey> keys, Set<BlockKey> keep) {
        Set<BlockKey> keySet = new HashSet<>(keys);
        int absent = 0;
        for (BlockKey k : keySet) {
            if (entries.get(k) == null) {
                absent++;
            }
        }
        int need = absent - freeSlots();
        if (need <= 0 || absent > capacity) {
            return List.of();
        }
        List<BlockKey> victims = policy.victims(need, k -> !keySet.contains(k) && !keep.contains(k) && evictable(k));
        return victims.size() < need ? List.of() : victims;
    }

    /**
     * Every entry whose chain of recorded parents passes through {@code key} (its children,
     * their children, ...), in any state; empty if none. One pass over the entries.
     */
    public List<BlockKey> descendantsOf(BlockKey key) {
        Map<BlockKey, List<BlockKey>> children = new HashMap<>();
        for (Entry e : entries.all()) {
            children.computeIfAbsent(e.parent, p -> new ArrayList<>()).add(e.key);
        }
        List<BlockKey> out = new ArrayList<>(children.getOrDefault(key, List.of()));
        for (int i = 0; i < out.size(); i++) {
            out.addAll(children.getOrDefault(out.get(i), List.of()));
        }
        return out;
    }

    /**
     * The entries of this tier that hold a chunk before one of the chunks whose parents are
     * {@code parents}, in its chain: from each parent up, every key this tier holds (not being
     * removed). A parent this tier does not hold is followed through {@code parentElsewhere} (e.g.
     * the host tier's {@link #parentOf}; null: the walk ends there, as at the namespace seed). A
     * store that evicted one of them would leave a hole before its own chunks, and a chain is hit
     * from its head; pass the answer as {@code keep} to {@link #fittingPrefix} and
     * {@link #prepareStore(List, List, Set)}. Walks each chain once; no side effects.
     */
    public Set<BlockKey> heldPrefixes(List<BlockKey> parents, java.util.function.UnaryOperator<BlockKey> parentElsewhere) {
        Set<BlockKey> held = new HashSet<>();
        Set<BlockKey> walked = new HashSet<>();
        for (BlockKey p : parents) {
            while (p != null && walked.add(p)) {
                Entry e = entries.get(p);
                if (e != null && !e.doomed) {
                    held.add(p);
                }
                p = e != null ? e.parent : parentElsewhere.apply(p);
            }
        }
        return held;
    }

    /** The parent key recorded for {@code key}, or null if absent. */
    public BlockKey parentOf(BlockKey key) {
        Entry e = entries.get(key);
        return e == null ? null : e.parent;
    }

    /** Whether the key's bytes are readable (READY or LOADING). */
    public boolean readable(BlockKey key) {
        Entry e = entries.get(key);
        return e != null && e.readable();
    }

    private boolean evictable(BlockKey k) {
        Entry e = entries.get(k);
        return e != null && e.evictable();
    }

    /**
     * Ends a store planned by {@link #prepareStore}: pass the {@code toStore} keys of the
     * accepted plan (or a subset, e.g. the chunks before the first failed one with
     * {@code success = true} and the rest with {@code false}). On success the entries become
     * readable and a {@code BlockStored} event is emitted per run of keys that form a chain; on
     * failure they are removed and their slots freed, with no event. Entries marked for removal
     * meanwhile ({@link #clear}) are removed either way.
     *
     * @throws IllegalStateException if a key is not being stored (nothing changes then)
     */
    public void completeStore(List<BlockKey> keys, boolean success) {
        distinct(keys, "completeStore");
        boolean allKept = success;
        for (BlockKey k : keys) {
            Entry e = entries.get(k);
            if (e == null || e.ready()) {
                throw new IllegalStateException("tier " + tierName + ": completeStore of key " + k.shortHex()
                        + " which is " + state(k) + ", not storing");
            }
            allKept &= !e.doomed;
        }
        // The common case keeps every key: the caller's list is the one read below, not a copy.
        List<BlockKey> nowReady = allKept ? keys : new ArrayList<>(keys.size());
        for (BlockKey k : keys) {
            Entry e = entries.get(k);
            boolean keep = success && !e.doomed;
            entries.storeEnded(e, keep);
            if (keep && !allKept) {
                nowReady.add(k);
            }
        }
        if (nowReady.isEmpty()) {
            return;
        }
        policy.insert(nowReady);
        int start = 0;
        for (int i = 1; i <= nowReady.size(); i++) {
            if (i == nowReady.size() || !entries.get(nowReady.get(i)).parent.equals(nowReady.get(i - 1))) {
                List<BlockKey> run = nowReady.subList(start, i);
                events.stored(run, entries.get(run.getFirst()).parent, tierName);
                start = i;
            }
        }
    }

    /**
     * Removes a key whose stored bytes were found bad. A readable key disappears from lookups at
     * once ({@code BlockRemoved}); if a load still pins it, its slot is freed when the last load
     * completes. A key being stored is discarded when its store completes. No-op for an absent key.
     *
     * @return whether the key was readable
     */
    public boolean remove(BlockKey key) {
        Entry e = entries.get(key);
        if (e == null || e.doomed) {
            return false;
        }
        if (!e.ready()) {
            e.doomed = true;
            return false;
        }
        policy.remove(key);
        if (e.pins() == 0) {
            entries.drop(e);
        } else {
            e.doomed = true;
        }
        events.removed(List.of(key), tierName);
        return true;
    }

    /**
     * Drops every entry: READY unpinned ones at once, pinned and storing ones when their transfer
     * completes (they are invisible from now on). Emits {@code AllCleared} if a key was readable.
     * The policy forgets its history.
     */
    public void clear() {
        boolean anyReadable = false;
        for (Entry e : List.copyOf(entries.all())) {
            anyReadable |= e.readable();
            if (e.ready() && e.pins() == 0) {
                entries.drop(e);
            } else {
                e.doomed = true;
            }
        }
        policy.clear();
        if (anyReadable) {
            events.cleared(tierName);
        }
    }

    /** Every key with an entry, in any state (doomed ones included), in no particular order. */
    public List<BlockKey> keys() {
        List<BlockKey> keys = new java.util.ArrayList<>(entries.all().size());
        for (Entry e : entries.all()) {
            keys.add(e.key);
        }
        return keys;
    }

    /** Name of the tier. */
    public String tierName() {
        return tierName;
    }

    /** The policy ordering this tier's victims. */
    public CachePolicy policy() {
        return policy;
    }

    /** Number of slots. */
    public int capacity() {
        return capacity;
    }

    /** Slots holding no entry. */
    public int freeSlots() {
        return entries.freeSlots();
    }

    /** READY entries that no load pins (the evictable ones). */
    public int readyCount() {
        return entries.size() - entries.storing() - entries.pinned();
    }

    /** Entries pinned by at least one load (including ones waiting to be removed). */
    public int pinnedCount() {
        return entries.pinned();
    }

    /** Entries being stored (including ones to be discarded when their store completes). */
    public int storingCount() {
        return entries.storing();
    }

    /** Keys a lookup can hit now (READY or LOADING). */
    public int readableCount() {
        return policy.size();
    }

    /** Stores refused so far (tier full, too large, key being removed). */
    public long refusedStores() {
        return refusedStores;
    }

    /** Entries evicted so far to make room for stores. */
    public long evictions() {
        return evictions;
    }

    /** State of a key. */
    public EntryState state(BlockKey key) {
        return entries.state(key);
    }

    /** Slot of a key that has an entry (any state), or -1. */
    public int slotOf(BlockKey key) {
        Entry e = entries.get(key);
        return e == null ? -1 : e.slot;
    }

    /**
     * Checks the bookkeeping and throws IllegalStateException naming the first broken invariant:
     * every entry has its own slot in range; free + used = capacity; storing entries are not
     * pinned; entries waiting for removal are in flight; the counters match the entries; the
     * policy's members are exactly the readable entries.
     */
    public void checkInvariants() {
        TierEntries.Broken broken = entries.check(policy);
        if (broken != null) {
            fail(broken.invariant(), broken.detail());
        }
    }

    private void fail(String invariant, String detail) {
        throw new IllegalStateException("tier " + tierName + ": invariant '" + invariant + "' broken: " + detail);
    }

    @Override
    public String toString() {
        return "TierIndex[" + tierName + " cap=" + capacity + " free=" + freeSlots() + " ready=" + readyCount()
                + " pinned=" + pinnedCount() + " storing=" + storingCount() + " policy=" + policy.name() + "]";
    }
}

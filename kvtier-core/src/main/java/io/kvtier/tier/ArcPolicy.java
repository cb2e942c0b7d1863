package io.kvtier.tier;

import io.kvtier.kv.BlockKey;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.function.Predicate;

/**
 * Adaptive Replacement Cache (N. Megiddo and D. S. Modha, "ARC: A Self-Tuning, Low Overhead
 * Replacement Cache", FAST 2003), adapted to a tier whose stores and evictions are decided by
 * its bookkeeping:
 * <ul>
 *   <li>{@code T1}: members seen once (inserted, never touched since); {@code T2}: members
 *       touched at least once after insertion. Each list is kept least recent first.</li>
 *   <li>{@code B1} / {@code B2}: ghosts, keys recently evicted from {@code T1} / {@code T2}. Only
 *       {@link #evicted} creates a ghost; {@link #remove} (a corrupt or cleared entry) does not,
 *       and neither does a store that failed (it never became a member).</li>
 *   <li>Inserting a key that is a ghost in {@code B1} raises the target size {@code p} of
 *       {@code T1} by {@code max(1, |B2|/|B1|)}, one in {@code B2} lowers it by
 *       {@code max(1, |B1|/|B2|)}; either way the key enters {@code T2}.</li>
 *   <li>Victims come from the least recent end of {@code T1} while {@code |T1| > p}, otherwise
 *       from {@code T2}; when the chosen list has no evictable key, from the other list. (The
 *       paper's tie rule for a request that hits {@code B2} is left out: a tier does not know
 *       which insertion an eviction is for.)</li>
 *   <li>Ghost bounds: {@code |T1| + |B1| <= c} and {@code |B1| + |B2| <= c}, trimming the least
 *       recent ghosts (of {@code B1} first for the first bound, of {@code B2} first for the
 *       second), where {@code c} is the tier capacity in chunks.</li>
 * </ul>
 */
public final class ArcPolicy implements CachePolicy {

    private final int capacity;
    private final LinkedHashSet<BlockKey> t1 = new LinkedHashSet<>();
    private final LinkedHashSet<BlockKey> t2 = new LinkedHashSet<>();
    private final LinkedHashSet<BlockKey> b1 = new LinkedHashSet<>();
    private final LinkedHashSet<BlockKey> b2 = new LinkedHashSet<>();
    private int target; // p: the size ARC aims at for T1, 0..capacity

    /** ARC for a tier of {@code capacity} chunks (> 0). */
    public ArcPolicy(int capacity) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("ARC capacity must be positive, got " + capacity);
        }
        this.capacity = capacity;
    }

    @Override
    public String name() {
        return "arc";
    }

    @Override
    public void insert(List<BlockKey> keys) {
        for (int i = keys.size() - 1; i >= 0; i--) {
            BlockKey k = keys.get(i);
            if (t1.contains(k) || t2.contains(k)) {
                promote(k);
            } else if (b1.remove(k)) {
                int delta = b1.size() + 1 >= b2.size() ? 1 : b2.size() / (b1.size() + 1);
                target = Math.min(capacity, target + delta);
                t2.addLast(k);
            } else if (b2.remove(k)) {
                int delta = b2.size() + 1 >= b1.size() ? 1 : b1.size() / (b2.size() + 1);
                target = Math.max(0, target - delta);
                t2.addLast(k);
            } else {
                t1.addLast(k);
            }
        }
        trimGhosts();
    }

    @Override
    public void touch(List<BlockKey> keys) {
        for (int i = keys.size() - 1; i >= 0; i--) {
            BlockKey k = keys.get(i);
            if (t1.contains(k) || t2.contains(k)) {
                promote(k);
            }
        }
    }

    private void promote(BlockKey k) {
        t1.remove(k);
        t2.addLast(k); // moves to the most recent end when already in T2
    }

    @Override
    public List<BlockKey> victims(int n, Predicate<BlockKey> evictable) {
        List<BlockKey> out = new ArrayList<>(Math.max(0, n));
        Iterator<BlockKey> it1 = t1.iterator();
        Iterator<BlockKey> it2 = t2.iterator();
        BlockKey next1 = nextEvictable(it1, evictable);
        BlockKey next2 = nextEvictable(it2, evictable);
        int size1 = t1.size();
        while (out.size() < n && (next1 != null || next2 != null)) {
            boolean fromT1 = next1 != null && (next2 == null || size1 > target);
            if (fromT1) {
                out.add(next1);
                size1--;
                next1 = nextEvictable(it1, evictable);
            } else {
                out.add(next2);
                next2 = nextEvictable(it2, evictable);
            }
        }
        return out;
    }

    private static BlockKey nextEvictable(Iterator<BlockKey> it, Predicate<BlockKey> evictable) {
        while (it.hasNext()) {
            BlockKey k = it.next();
            if (evictable.test(k)) {
                return k;
            }
        }
        return null;
    }

    @Override
    public void evicted(BlockKey key) {
        if (t1.remove(key)) {
            b1.addLast(key);
        } else if (t2.remove(key)) {
            b2.addLast(key);
        }
        trimGhosts();
    }

    private void trimGhosts() {
        while (t1.size() + b1.size() > capacity && !b1.isEmpty()) {
            b1.removeFirst();
        }
        while (b1.size() + b2.size() > capacity) {
            if (!b2.isEmpty()) {
                b2.removeFirst();
            } else {
                b1.removeFirst();
            }
        }
    }

    @Override
    public void remove(BlockKey key) {
        t1.remove(key);
        t2.remove(key);
    }

    @Override
    public void clear() {
        t1.clear();
        t2.clear();
        b1.clear();
        b2.clear();
        target = 0;
    }

    @Override
    public boolean contains(BlockKey key) {
        return t1.contains(key) || t2.contains(key);
    }

    @Override
    public int size() {
        return t1.size() + t2.size();
    }

    /** Capacity {@code c} in chunks. */
    public int capacity() {
        return capacity;
    }

    /** Target size {@code p} of T1, 0..capacity. */
    public int target() {
        return target;
    }

    /** Members seen once, least recent first (a copy). */
    public List<BlockKey> t1() {
        return List.copyOf(t1);
    }

    /** Members seen at least twice, least recent first (a copy). */
    public List<BlockKey> t2() {
        return List.copyOf(t2);
    }

    /** Ghosts evicted from T1, least recent first (a copy). */
    public List<BlockKey> b1() {
        return List.copyOf(b1);
    }

    /** Ghosts evicted from T2, least recent first (a copy). */
    public List<BlockKey> b2() {
        return List.copyOf(b2);
    }

    @Override
    public String toString() {
        return "ArcPolicy[p=" + target + " T1=" + t1.size() + " T2=" + t2.size()
                + " B1=" + b1.size() + " B2=" + b2.size() + "]";
    }
}

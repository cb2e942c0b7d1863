package io.kvtier.tier;

import io.kvtier.kv.BlockKey;
import java.util.List;
import java.util.function.Predicate;

/**
 * LRU and hit density ({@link HitDensityPolicy}) dueling: evicts as whichever of the two would
 * recently have hit more at this capacity ({@code --eviction duel}). Hit density wins where the
 * cache is small against the reuse gap and loses to LRU by a little at some large capacities
 * (docs/cache-policy.md); following the leader keeps the first without the second.
 *
 * <p>After set dueling (Qureshi et al., ISCA 2007: sampled sets run each policy, a saturating
 * counter picks the winner for the rest) and LeCaR (Vietri et al., HotStorage 2018: two experts,
 * the one whose evictions are regretted loses weight), but with <b>full shadow caches</b> instead
 * of sampled sets or ghost regret: a tier holds few enough chunks (tens of thousands) that each
 * policy can be simulated whole on keys only. Each shadow sees every access of the tier (a stored
 * chunk, a hit) and keeps at most {@code capacity} keys by its own rule; an access to a key the
 * shadow holds is a hit of that policy. Each policy's score is its shadow hits, decayed by
 * {@code 1 - 1/window} per access call, so it measures roughly the last {@code window} calls.
 *
 * <p>The members are ordered twice, by a real LRU and a real hit density policy over exactly the
 * tier's members (both see every call); {@link #victims} returns the order of the policy followed.
 * LRU is followed until hit density's score exceeds LRU's by more than {@code margin} (a relative
 * lead, {@link #DEFAULT_MARGIN} by default); hit density is then followed until its score is no
 * longer above LRU's (hysteresis). With no evidence it is LRU. The margin is there because the
 * shadows approximate: they know nothing of pinned or in-store entries or of all-or-nothing
 * stores, and count hits per chunk, not per longest prefix, so a small lead of hit density's
 * shadow is no evidence that the tier would hit more by it (the synthetic trace at 2M tokens:
 * following the slightest lead ended 0.0046 of hit ratio below LRU, docs/cache-policy.md), and
 * each switch evicts by an order the tier's contents were not shaped by.
 *
 * <p>Costs about two hit density policies (one ordering, one shadow) plus two LRU lists.
 */
public final class DuelingPolicy implements CachePolicy {

    /** Access calls the scores remember (the decay's time constant) by default. */
    public static final int DEFAULT_WINDOW = 4096;
    /** Relative lead of hit density's score over LRU's before it is followed, by default. */
    public static final double DEFAULT_MARGIN = 0.1;

    private final int capacity;
    private final double keep;
    private final double margin;
    private final LruPolicy lru = new LruPolicy();
    private final HitDensityPolicy lhd;
    private final LruPolicy shadowLru = new LruPolicy();
    private final HitDensityPolicy shadowLhd;
    private double lruScore;
    private double lhdScore;
    private boolean followLhd;

    /** For a tier of {@code capacity} chunks (> 0), with {@link #DEFAULT_WINDOW}. */
    public DuelingPolicy(int capacity) {
        this(capacity, DEFAULT_WINDOW);
    }

    /**
     * @param capacity tier capacity in chunks (> 0): each shadow holds this many keys
     * @param window   access calls the scores remember (> 0)
     */
    public DuelingPolicy(int capacity, int window) {
        this(capacity, window, DEFAULT_MARGIN, HitDensityPolicy::new);
    }

    /** With {@link #DEFAULT_MARGIN} and hit density policies made by {@code lhd} from the capacity. */
    DuelingPolicy(int capacity, int window, java.util.function.IntFunction<HitDensityPolicy> lhd) {
        this(capacity, window, DEFAULT_MARGIN, lhd);
    }

    /**
     * @param margin relative lead (>= 0) hit density's score needs over LRU's to be followed
     * @param lhd    makes the hit density policies from the capacity (tests: parameters that learn within a few ticks)
     */
    DuelingPolicy(int capacity, int window, double margin, java.util.function.IntFunction<HitDensityPolicy> lhd) {
        if (capacity <= 0 || window <= 0 || !(margin >= 0)) {
            throw new IllegalArgumentException("dueling policy needs capacity and window > 0 and margin >= 0, got " + capacity + ", "
                    + window + ", " + margin);
        }
        this.capacity = capacity;
        this.keep = 1.0 - 1.0 / window;
        this.margin = margin;
        this.lhd = lhd.apply(capacity);
        this.shadowLhd = lhd.apply(capacity);
    }

    @Override
    public String name() {
        return "duel";
    }

    @Override
    public void insert(List<BlockKey> keys) {
        lru.insert(keys);
        lhd.insert(keys);
        shadows(keys);
    }

    @Override
    public void touch(List<BlockKey> keys) {
        lru.touch(keys);
        lhd.touch(keys);
        shadows(keys);
    }

    /** Scores the access in each shadow, then lets each shadow store the keys it lacked and evict by its rule. */
    private void shadows(List<BlockKey> keys) {
        if (keys.isEmpty()) {
            return;
        }
        lruScore = lruScore * keep + hits(shadowLru, keys);
        lhdScore = lhdScore * keep + hits(shadowLhd, keys);
        access(shadowLru, keys);
        access(shadowLhd, keys);
        followLhd = lhdScore > lruScore * (followLhd ? 1 : 1 + margin);
    }

    private static int hits(CachePolicy shadow, List<BlockKey> keys) {
        int n = 0;
        for (BlockKey k : keys) {
            n += shadow.contains(k) ? 1 : 0;
        }
        return n;
    }

    private void access(CachePolicy shadow, List<BlockKey> keys) {
        shadow.insert(keys); // members are touched, the others stored, as the tier would
        int over = shadow.size() - capacity;
        if (over > 0) {
            for (BlockKey k : shadow.victims(over, k -> true)) {
                shadow.evicted(k);
            }
        }
    }

    /** LRU's score: its shadow's hits, decayed per access call. */
    public double lruScore() {
        return lruScore;
    }

    /** Hit density's score: its shadow's hits, decayed per access call. */
    public double lhdScore() {
        return lhdScore;
    }

    /**
     * Whether hit density is followed: its score came above LRU's by more than the margin and has
     * not fallen back to LRU's since.
     */
    public boolean lhdLeads() {
        return followLhd;
    }

    @Override
    public List<BlockKey> victims(int n, Predicate<BlockKey> evictable) {
        return lhdLeads() ? lhd.victims(n, evictable) : lru.victims(n, evictable);
    }

    @Override
    public void evicted(BlockKey key) {
        lru.evicted(key);
        lhd.evicted(key);
    }

    @Override
    public void remove(BlockKey key) {
        lru.remove(key);
        lhd.remove(key);
    }

    @Override
    public void clear() {
        lru.clear();
        lhd.clear();
        shadowLru.clear();
        shadowLhd.clear();
        lruScore = 0;
        lhdScore = 0;
        followLhd = false;
    }

    @Override
    public boolean contains(BlockKey key) {
        return lru.contains(key);
    }

    @Override
    public int size() {
        return lru.size();
    }

    @Override
    public String toString() {
        return "DuelingPolicy[lru " + lruScore + ", lhd " + lhdScore + ", " + size() + " members]";
    }
}

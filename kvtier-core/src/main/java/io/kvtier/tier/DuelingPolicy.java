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
 * <b>Which one</b>: each access call is a paired sample {@code d} = hit density's shadow hits minus
 * LRU's on the same keys. LRU is followed until the decayed sum of {@code d} exceeds {@code z}
 * standard errors of that sum ({@link #DEFAULT_Z} by default; the variance of {@code d} from the
 * decayed sums of {@code d} and {@code d^2}, the effective number of samples from the decayed
 * weights); hit density is then followed while the sum stays above 0 (hysteresis). With no
 * evidence it is LRU. A test of the lead's significance rather than any lead, because the shadows
 * approximate: they know nothing of pinned or in-store entries or of all-or-nothing stores, and count
 * hits per chunk, not per longest prefix, so a lead within its noise is no evidence that the tier
 * would hit more by it, and each switch evicts by an order the tier's contents were not shaped by
 * (docs/cache-policy.md: following the slightest lead ended 0.0046 of hit ratio below LRU on the
 * synthetic trace at 2M tokens).
 *
 * <p><b>A tier behind</b> ({@link #scoreOnlyWhereAbsent}): with a disk tier written through behind
 * this one, a hit on a chunk the disk also holds is not lost by evicting it here (the hierarchy still
 * hits); the shadows then score only the keys the tier behind lacks, so hit density is followed only
 * where it keeps what the hierarchy would otherwise lose.
 *
 * <p>Costs about two hit density policies (one ordering, one shadow) plus two LRU lists.
 */
public final class DuelingPolicy implements CachePolicy {

    /** Access calls the scores remember (the decay's time constant) by default. */
    public static final int DEFAULT_WINDOW = 4096;
    /**
     * Standard errors by which hit density's decayed lead must exceed 0 before it is followed, by
     * default: chosen on the conversation trace's first half at 3M host tokens (z = 1, 2, 3 measured;
     * docs/cache-policy.md).
     */
    public static final double DEFAULT_Z = 2.0;

    private final int capacity;
    private final double keep;
    private final double z;
    private final LruPolicy lru = new LruPolicy();
    private final HitDensityPolicy lhd;
    private final LruPolicy shadowLru = new LruPolicy();
    private final HitDensityPolicy shadowLhd;
    private double lruScore;
    private double lhdScore;
    private final PairedLead lead;
    private boolean followLhd;
    private Predicate<BlockKey> behind = k -> false;

    /** For a tier of {@code capacity} chunks (> 0), with {@link #DEFAULT_WINDOW}. */
    public DuelingPolicy(int capacity) {
        this(capacity, DEFAULT_WINDOW);
    }

    /**
     * @param capacity tier capacity in chunks (> 0): each shadow holds this many keys
     * @param window   access calls the scores remember (> 0)
     */
    public DuelingPolicy(int capacity, int window) {
        this(capacity, window, DEFAULT_Z, HitDensityPolicy::new);
    }

    /** With {@link #DEFAULT_Z} and hit density policies made by {@code lhd} from the capacity. */
    DuelingPolicy(int capacity, int window, java.util.function.IntFunction<HitDensityPolicy> lhd) {
        this(capacity, window, DEFAULT_Z, lhd);
    }

    /**
     * @param z   standard errors (>= 0) by which hit density's decayed lead must exceed 0 to be followed
     * @param lhd makes the hit density policies from the capacity (tests: parameters that learn within a few ticks)
     */
    DuelingPolicy(int capacity, int window, double z, java.util.function.IntFunction<HitDensityPolicy> lhd) {
        if (capacity <= 0 || window <= 0 || !(z >= 0)) {
            throw new IllegalArgumentException("dueling policy needs capacity and window > 0 and z >= 0, got " + capacity + ", "
                    + window + ", " + z);
        }
        this.capacity = capacity;
        this.keep = 1.0 - 1.0 / window;
        this.z = z;
        this.lead = new PairedLead(keep);
        this.lhd = lhd.apply(capacity);
        this.shadowLhd = lhd.apply(capacity);
    }

    @Override
    public String name() {
        return "duel";
    }

    /**
     * From now on the shadows score only the keys {@code held} does not hold: the chunks a tier
     * behind this one (a disk tier written through) lacks, whose hits the hierarchy would lose. The
     * predicate is asked at each access, before the tier behind changes by it. Until called, every key
     * is scored.
     */
    public void scoreOnlyWhereAbsent(Predicate<BlockKey> held) {
        this.behind = java.util.Objects.requireNonNull(held, "held");
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
        int lruHits = hits(shadowLru, keys);
        int lhdHits = hits(shadowLhd, keys);
        lruScore = lruScore * keep + lruHits;
        lhdScore = lhdScore * keep + lhdHits;
        lead.add(lhdHits - lruHits);
        access(shadowLru, keys);
        access(shadowLhd, keys);
        followLhd = followLhd ? lead.lead() > 0 : lead.exceeds(z);
    }

    /** Standard error of hit density's decayed lead over LRU ({@link PairedLead}). */
    double leadStandardError() {
        return lead.standardError();
    }

    private int hits(CachePolicy shadow, List<BlockKey> keys) {
        int n = 0;
        for (BlockKey k : keys) {
            n += shadow.contains(k) && !behind.test(k) ? 1 : 0;
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
     * Whether hit density is followed: its decayed lead over LRU came above {@code z} standard
     * errors and has not fallen back to 0 since.
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
        lead.clear();
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

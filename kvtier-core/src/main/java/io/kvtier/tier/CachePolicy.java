package io.kvtier.tier;

import io.kvtier.kv.BlockKey;
import java.util.List;
import java.util.function.Predicate;

/**
 * Orders eviction victims among the entries of one tier. A policy never decides what is pinned:
 * the tier ({@link TierIndex}) tells it which keys are members and, when it needs room, which
 * members may be evicted right now.
 *
 * <p>Membership: a key is a member from {@link #insert} (its store completed) until {@link #evicted}
 * (the tier evicted it to make room) or {@link #remove} (it left for another reason: corrupt,
 * cleared). Entries being loaded stay members (so a load does not reset their history); the tier
 * excludes them from {@link #victims} through the predicate.
 *
 * <p>Keys passed as a list are a chain in prefix order (head first). Implementations walk such
 * lists tail-first, so that after {@link #insert} or {@link #touch} the head of the prefix is the
 * hottest key: a tail is useless without its head, so tails should go first.
 *
 * <p>Not thread-safe: called only from the engine thread, through the tier's bookkeeping.
 */
public sealed interface CachePolicy permits LruPolicy, ArcPolicy, HitDensityPolicy, DuelingPolicy {

    /** Short name for logs and configuration ({@code "lru"}, {@code "arc"}, {@code "lhd"}, {@code "duel"}). */
    String name();

    /** Adds keys that became readable. Keys already members are treated as a touch. */
    void insert(List<BlockKey> keys);

    /** Records an access to each member key (tail-first); keys that are not members are ignored. */
    void touch(List<BlockKey> keys);

    /**
     * Up to {@code n} distinct member keys for which {@code evictable} is true, best victim first.
     * Changes no state: the tier may decide not to evict any of them (all-or-nothing stores).
     */
    List<BlockKey> victims(int n, Predicate<BlockKey> evictable);

    /** The tier evicted a member to make room (ARC remembers it as a ghost). */
    void evicted(BlockKey key);

    /** A member left without eviction (corrupt, removed, cleared): no history is kept. No-op if absent. */
    void remove(BlockKey key);

    /** Forgets every member and all history. */
    void clear();

    /** Whether the key is a member. */
    boolean contains(BlockKey key);

    /** Number of members. */
    int size();

    /** A new LRU policy. */
    static CachePolicy lru() {
        return new LruPolicy();
    }

    /** A new ARC policy for a tier of {@code capacity} chunks. */
    static CachePolicy arc(int capacity) {
        return new ArcPolicy(capacity);
    }

    /** A new hit-density policy (defaults of {@link HitDensityPolicy}) for a tier of {@code capacity} chunks. */
    static CachePolicy hitDensity(int capacity) {
        return new HitDensityPolicy(capacity);
    }

    /** LRU and hit density dueling ({@link DuelingPolicy}) for a tier of {@code capacity} chunks. */
    static CachePolicy dueling(int capacity) {
        return new DuelingPolicy(capacity);
    }

    /** Policy by name ({@code lru}, {@code arc}, {@code lhd} or {@code duel}, case-insensitive) for a tier of {@code capacity} chunks. */
    static CachePolicy named(String name, int capacity) {
        return switch (name.toLowerCase(java.util.Locale.ROOT)) {
            case "lru" -> lru();
            case "arc" -> arc(capacity);
            case "lhd" -> hitDensity(capacity);
            case "duel" -> dueling(capacity);
            default -> throw new IllegalArgumentException("unknown cache policy '" + name + "' (expected lru, arc, lhd or duel)");
        };
    }

    /**
     * The policy of a tier behind the host tier (the disk tier, written through from host slots) of
     * {@code capacity} chunks, when the host tier runs {@code name}: that policy, except LRU behind
     * {@code duel}. Such a tier sees writes, promotions and the host's hits (a touch, no hit of its
     * own), and when it saw only the first two its own {@code duel} followed hit density where LRU
     * would have hit more (synthetic trace, 5M host + 10M disk tokens: 0.5684 against 0.5787), while on
     * the conversation trace's first half it never left LRU; the host tier's {@code duel} already
     * scores only what this tier lacks (docs/cache-policy.md, "the synthetic 5M + 10M disk cell").
     *
     * @throws IllegalArgumentException for an unknown name
     */
    static CachePolicy behindHost(String name, int capacity) {
        CachePolicy host = named(name, 1); // validates the name
        return host instanceof DuelingPolicy ? lru() : named(name, capacity);
    }
}

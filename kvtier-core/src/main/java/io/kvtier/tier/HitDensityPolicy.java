package io.kvtier.tier;

import io.kvtier.kv.BlockKey;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * Hit density by age, learned online (after N. Beckmann, H. Chen and A. Cidon, "LHD: Improving
 * Cache Hit Rate by Maximizing Hit Density", NSDI 2018), with the hit-age histograms learned from
 * ghost hits too. Evicts the members whose expected hits per unit of cache space-time from now on
 * are lowest.
 *
 * <ul>
 *   <li><b>Clock</b>: one tick per non-empty {@link #insert} or {@link #touch} call (the tier makes
 *       about one or two per request). A member's <b>age</b> is the ticks since its last access,
 *       bucketed by {@code granularity} into {@code buckets} buckets (the last one is open).</li>
 *   <li><b>Class</b> of a member, set at each access: {@code min(accesses before this one, 2)}
 *       times three buckets of the call's chain length (fewer than 5 keys, fewer than 20, more):
 *       a request that adds few new chunks is more often continued, and one whose prefix was
 *       read before is read again sooner.</li>
 *   <li><b>Learning</b>: an access to a member counts a hit at its age in its class's histogram;
 *       an {@link #insert} of a key evicted earlier (a ghost, remembered with its class and last
 *       access) counts the hit it would have been. Without the ghosts the histograms would only
 *       see hits that the policy itself allowed (censored): items it evicts young would look
 *       worthless forever. Ghosts are bounded ({@code ghostFactor} times the capacity, oldest
 *       dropped); {@link #remove} and failed stores leave none.</li>
 *   <li><b>Density</b> of class {@code c} at age bucket {@code a}: with {@code n} the accesses that
 *       entered the class and {@code h[i]} its hits at age bucket {@code i}, alive(i) = n - sum of
 *       h below i; density(a) = (sum of h[i] for i >= a) / (sum of alive(i) for i >= a), the hits
 *       still to come over the space-time still to spend. Every {@code period} ticks the curves are
 *       recomputed and the histograms decay by {@code decay}. Before the first recomputation every
 *       density is {@code 1 / (1 + bucket)} (recency, like LRU); after it a class that no access
 *       entered yet has density 0.</li>
 *   <li><b>Victims</b>: lowest density first; ties go to the older bucket, then the lower class;
 *       within a bucket oldest access first; members of one access tail-first (the chain's head
 *       is evicted last, as in {@link LruPolicy}). Members are grouped by (class, last access),
 *       so finding victims sorts the (class, bucket) cells, not the members.</li>
 * </ul>
 */
public final class HitDensityPolicy implements CachePolicy {

    /** Ticks per age bucket of the default policy. */
    public static final int DEFAULT_GRANULARITY = 64;
    /** Age buckets of the default policy. */
    public static final int DEFAULT_BUCKETS = 128;
    /** Ghosts per unit of capacity of the default policy. */
    public static final int DEFAULT_GHOST_FACTOR = 8;
    /** Ticks between recomputations of the default policy. */
    public static final int DEFAULT_PERIOD = 1000;
    /** Histogram decay at each recomputation of the default policy. */
    public static final double DEFAULT_DECAY = 0.9;

    private static final int HIT_CLASSES = 3;
    private static final int LENGTH_CLASSES = 3;
    private static final int CLASSES = HIT_CLASSES * LENGTH_CLASSES;

    private record Member(int cls, long last, int accesses) {
    }

    private final int capacity;
    private final int granularity;
    private final int buckets;
    private final int ghostCapacity;
    private final int period;
    private final double decay;

    private final Map<BlockKey, Member> members = new HashMap<>();
    /** Per class: last access -> members accessed then, in the order they were accessed (tail first). */
    private final List<TreeMap<Long, LinkedHashSet<BlockKey>>> groups = new ArrayList<>();
    private final LinkedHashMap<BlockKey, Member> ghosts = new LinkedHashMap<>();
    private final double[][] hits;
    private final double[] entered = new double[CLASSES];
    private final double[][] density = new double[CLASSES][];
    private long now;
    private boolean learned;
    /**
     * Every (class, bucket) cell as {@code cls * buckets + bucket}, in victim order (lowest density
     * first, then older bucket, then lower class); null when the densities changed since it was sorted.
     * The order depends only on the densities, which change only at {@link #recompute}, so {@link
     * #victims} sorts once per period instead of once per call.
     */
    private int[] cellOrder;

    /** The default policy for a tier of {@code capacity} chunks (> 0). */
    public HitDensityPolicy(int capacity) {
        this(capacity, DEFAULT_GRANULARITY, DEFAULT_BUCKETS, DEFAULT_GHOST_FACTOR, DEFAULT_PERIOD, DEFAULT_DECAY);
    }

    /**
     * @param capacity    tier capacity in chunks (> 0)
     * @param granularity ticks per age bucket (> 0)
     * @param buckets     age buckets (> 0)
     * @param ghostFactor ghosts kept per unit of capacity (>= 0)
     * @param period      ticks between recomputations of the density curves (> 0)
     * @param decay       factor applied to the histograms at each recomputation, in (0, 1]
     */
    public HitDensityPolicy(int capacity, int granularity, int buckets, int ghostFactor, int period, double decay) {
        if (capacity <= 0 || granularity <= 0 || buckets <= 0 || ghostFactor < 0 || period <= 0
                || !(decay > 0 && decay <= 1)) {
            throw new IllegalArgumentException("hit density policy needs capacity, granularity, buckets, period > 0, "
                    + "ghostFactor >= 0 and decay in (0, 1]; got " + capacity + ", " + granularity + ", " + buckets
                    + ", " + ghostFactor + ", " + period + ", " + decay);
        }
        this.capacity = capacity;
        this.granularity = granularity;
        this.buckets = buckets;
        this.ghostCapacity = (int) Math.min(Integer.MAX_VALUE, (long) ghostFactor * capacity);
        this.period = period;
        this.decay = decay;
        this.hits = new double[CLASSES][buckets];
        for (int c = 0; c < CLASSES; c++) {
            groups.add(new TreeMap<>());
        }
    }

    @Override
    public String name() {
        return "lhd";
    }

    @Override
    public void insert(List<BlockKey> keys) {
        access(keys, true);
    }

    @Override
    public void touch(List<BlockKey> keys) {
        access(keys, false);
    }

    private void access(List<BlockKey> keys, boolean insert) {
        if (keys.isEmpty()) {
            return;
        }
        now++;
        int lengthClass = keys.size() < 5 ? 0 : keys.size() < 20 ? 1 : 2;
        for (int i = keys.size() - 1; i >= 0; i--) {
            BlockKey k = keys.get(i);
            Member m = members.get(k);
            int accesses;
            if (m != null) {
                leaveGroup(k, m);
                hits[m.cls][bucket(now - m.last)]++;
                accesses = m.accesses + 1;
            } else if (!insert) {
                continue; // not a member: touches ignore it
            } else {
                Member ghost = ghosts.remove(k);
                if (ghost != null) {
                    hits[ghost.cls][bucket(now - ghost.last)]++;
                    accesses = ghost.accesses + 1;
                } else {
                    accesses = 0;
                }
            }
            int cls = Math.min(accesses, HIT_CLASSES - 1) * LENGTH_CLASSES + lengthClass;
            entered[cls]++;
            Member next = new Member(cls, now, accesses);
            members.put(k, next);
            groups.get(cls).computeIfAbsent(now, t -> new LinkedHashSet<>()).add(k);
        }
        if (now % period == 0) {
            recompute();
        }
    }

    private void leaveGroup(BlockKey k, Member m) {
        TreeMap<Long, LinkedHashSet<BlockKey>> byLast = groups.get(m.cls);
        LinkedHashSet<BlockKey> g = byLast.get(m.last);
        g.remove(k);
        if (g.isEmpty()) {
            byLast.remove(m.last);
        }
    }

    private int bucket(long age) {
        return (int) Math.min(age / granularity, buckets - 1);
    }

    private void recompute() {
        learned = true;
        cellOrder = null;
        for (int c = 0; c < CLASSES; c++) {
            double n = entered[c];
            if (n > 0) {
                double[] h = hits[c];
                double[] alive = new double[buckets];
                double cum = 0;
                for (int a = 0; a < buckets; a++) {
                    alive[a] = Math.max(0, n - cum);
                    cum += h[a];
                }
                double[] d = new double[buckets];
                double futureHits = 0;
                double futureLife = 0;
                for (int a = buckets - 1; a >= 0; a--) {
                    futureHits += h[a];
                    futureLife += alive[a];
                    d[a] = futureLife > 0 ? futureHits / futureLife : 0;
                }
                density[c] = d;
            }
            entered[c] *= decay;
            for (int a = 0; a < buckets; a++) {
                hits[c][a] *= decay;
            }
        }
    }

    /** Density of class {@code cls} at age bucket {@code bucket}: learned, or recency before the first recomputation. */
    double density(int cls, int bucket) {
        if (!learned) {
            return 1.0 / (1 + bucket);
        }
        double[] d = density[cls];
        return d == null ? 0 : d[bucket];
    }

    /** Hits counted (decayed) for class {@code cls} at age bucket {@code bucket}. */
    double hitsAt(int cls, int bucket) {
        return hits[cls][bucket];
    }

    private record Cell(int cls, int bucket, double density) {
    }

    /** The cells in victim order, sorted when the densities changed ({@link #cellOrder}). */
    private int[] cellOrder() {
        if (cellOrder == null) {
            List<Cell> cells = new ArrayList<>(CLASSES * buckets);
            for (int c = 0; c < CLASSES; c++) {
                for (int a = 0; a < buckets; a++) {
                    cells.add(new Cell(c, a, density(c, a)));
                }
            }
            // a total order (no two cells share class and bucket), so sorting every cell once and
            // skipping the empty ones later gives the order that sorting only the non-empty ones would
            cells.sort(Comparator.comparingDouble(Cell::density)
                    .thenComparing(Comparator.comparingInt(Cell::bucket).reversed())
                    .thenComparingInt(Cell::cls));
            cellOrder = cells.stream().mapToInt(cell -> cell.cls * buckets + cell.bucket).toArray();
        }
        return cellOrder;
    }

    @Override
    public List<BlockKey> victims(int n, Predicate<BlockKey> evictable) {
        List<BlockKey> out = new ArrayList<>(Math.max(0, n));
        if (n <= 0) {
            return out;
        }
        // per class, the buckets its members' ages span (youngest, oldest): cells outside hold no one
        int[] youngest = new int[CLASSES];
        int[] oldest = new int[CLASSES];
        for (int c = 0; c < CLASSES; c++) {
            TreeMap<Long, LinkedHashSet<BlockKey>> byLast = groups.get(c);
            if (byLast.isEmpty()) {
                youngest[c] = buckets; // no cell of this class is visited
                oldest[c] = -1;
            } else {
                youngest[c] = bucket(now - byLast.lastKey());
                oldest[c] = bucket(now - byLast.firstKey());
            }
        }
        for (int cell : cellOrder()) {
            int c = cell / buckets;
            int a = cell % buckets;
            if (a < youngest[c] || a > oldest[c]) {
                continue;
            }
            for (LinkedHashSet<BlockKey> g : lastRange(c, a).values()) {
                for (BlockKey k : g) {
                    if (evictable.test(k)) {
                        out.add(k);
                        if (out.size() == n) {
                            return out;
                        }
                    }
                }
            }
        }
        return out;
    }

    /** Groups of class {@code cls} whose age falls in bucket {@code bucket}, oldest first. */
    private NavigableMap<Long, LinkedHashSet<BlockKey>> lastRange(int cls, int bucket) {
        TreeMap<Long, LinkedHashSet<BlockKey>> byLast = groups.get(cls);
        long newest = now - (long) bucket * granularity; // age >= bucket * granularity
        if (bucket == buckets - 1) {
            return byLast.headMap(newest, true);
        }
        long oldest = now - ((long) bucket + 1) * granularity; // age < (bucket + 1) * granularity
        return byLast.subMap(oldest, false, newest, true);
    }

    @Override
    public void evicted(BlockKey key) {
        Member m = members.remove(key);
        if (m == null) {
            return;
        }
        leaveGroup(key, m);
        if (ghostCapacity > 0) {
            ghosts.put(key, m);
            if (ghosts.size() > ghostCapacity) {
                ghosts.pollFirstEntry();
            }
        }
    }

    @Override
    public void remove(BlockKey key) {
        Member m = members.remove(key);
        if (m != null) {
            leaveGroup(key, m);
        }
    }

    @Override
    public void clear() {
        members.clear();
        groups.forEach(TreeMap::clear);
        ghosts.clear();
        for (double[] h : hits) {
            Arrays.fill(h, 0);
        }
        Arrays.fill(entered, 0);
        Arrays.fill(density, null);
        now = 0;
        learned = false;
        cellOrder = null;
    }

    @Override
    public boolean contains(BlockKey key) {
        return members.containsKey(key);
    }

    @Override
    public int size() {
        return members.size();
    }

    /** Capacity in chunks. */
    public int capacity() {
        return capacity;
    }

    /** Ticks so far (non-empty insert and touch calls since creation or {@link #clear}). */
    public long clock() {
        return now;
    }

    /** Keys evicted and still remembered, oldest first (a copy). */
    public List<BlockKey> ghosts() {
        return List.copyOf(ghosts.keySet());
    }

    /** Class of a member ({@code min(prior accesses, 2) * 3 + length class}), or -1. */
    public int classOf(BlockKey key) {
        Member m = members.get(key);
        return m == null ? -1 : m.cls;
    }

    @Override
    public String toString() {
        return "HitDensityPolicy[clock=" + now + " members=" + members.size() + " ghosts=" + ghosts.size() + "]";
    }
}

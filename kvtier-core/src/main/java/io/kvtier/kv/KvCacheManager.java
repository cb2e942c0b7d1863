package io.kvtier.kv;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Per-request block tables, one per {@link KvGroup}, each over the group's own {@link BlockPool},
 * and the device prefix-cache match across groups. A model whose layers all attend over the whole
 * sequence (every Llama or Qwen model) has one group holding every layer; a hybrid model (Gemma 3:
 * sliding-window and full layers) has one group per attention kind (docs/kv-groups.md).
 *
 * <p>Block index {@code i} of a request covers positions {@code [i * blockSize, (i+1) * blockSize)}
 * in every group; its chain key {@code keys.get(i)} ({@link BlockHasher}) is shared, and each group
 * caches its block under {@link #cacheKey}: group 0 under the chain key itself (so a one-group
 * model's keys, and the device events reported from group 0, are the chain keys), every other
 * group under {@link KvGroup#key}, so two groups never share a key.
 *
 * <p>Rules:
 * <ul>
 *   <li>A full-attention group holds every block of the request.</li>
 *   <li>A sliding-window group holds only blocks some later query can read: {@link #slide}
 *       releases the blocks before {@link KvGroup#firstReadBlock}; a released block that is cached
 *       stays in the prefix cache (evictable), and its table entry becomes {@link #NOT_HELD}, so no
 *       stale block id is ever handed to the kernel.</li>
 *   <li>A prefix hit is the longest prefix every group can serve: full groups need all its blocks,
 *       window groups the blocks inside the window that ends at the hit; the last prompt token is
 *       never a hit.</li>
 *   <li>Admission and growth are all or nothing across groups.</li>
 * </ul>
 * Engine thread only.
 */
public final class KvCacheManager {

    /** A table entry for a block this group does not hold (before the window). */
    public static final int NOT_HELD = -1;

    private final List<KvGroup> groups;
    private final BlockPool[] pools;
    private final int blockSize;
    private final boolean prefixCaching;
    /** Whether some group slides: otherwise {@link #slide} has nothing to do, ever. */
    private final boolean sliding;
    /** Request id -> its tables (looked up several times per request per step: no boxing). */
    private final LongObjectMap<Table> tables = new LongObjectMap<>();

    /** One request's blocks: position p of group g lives in {@code blocks[g][p / blockSize]}. */
    private static final class Table {
        final int[][] blocks;
        int size;
        /** Per group: leading blocks already registered in the prefix cache (or found there). */
        final int[] cachedBlocks;
        /** Per group: leading blocks already released by {@link #slide} (or never attached). */
        final int[] released;

        Table(int groups, int capacity) {
            blocks = new int[groups][Math.max(8, capacity)];
            for (int[] b : blocks) {
                Arrays.fill(b, NOT_HELD);
            }
            cachedBlocks = new int[groups];
            released = new int[groups];
        }

        void ensure(int capacity) {
            for (int g = 0; g < blocks.length; g++) {
                if (blocks[g].length < capacity) {
                    int old = blocks[g].length;
                    blocks[g] = Arrays.copyOf(blocks[g], Math.max(capacity, old * 2));
                    Arrays.fill(blocks[g], old, blocks[g].length, NOT_HELD);
                }
            }
        }
    }

    /** One group holding every layer of {@code pool}'s layout: today's single paged cache. */
    public KvCacheManager(BlockPool pool, boolean prefixCaching) {
        this(List.of(allLayers(pool.layout())), List.of(pool), prefixCaching);
    }

    /**
     * @param groups the model's groups ({@link KvGroups#of}), in index order
     * @param pools  one pool per group, in group order, all with the same block size
     * @throws IllegalArgumentException when the lists differ in length or the block sizes differ
     */
    public KvCacheManager(List<KvGroup> groups, List<BlockPool> pools, boolean prefixCaching) {
        if (groups.isEmpty() || groups.size() != pools.size()) {
            throw new IllegalArgumentException(groups.size() + " groups need as many pools, got " + pools.size());
        }
        this.groups = List.copyOf(groups);
        this.pools = pools.toArray(BlockPool[]::new);
        this.blockSize = this.pools[0].layout().blockSize();
        boolean anySliding = false;
        for (int g = 0; g < groups.size(); g++) {
            if (groups.get(g).index() != g || this.pools[g].layout().blockSize() != blockSize) {
                throw new IllegalArgumentException("group " + groups.get(g) + " at " + g + " with "
                        + this.pools[g].layout() + ": groups must be in index order with equal block sizes");
            }
            anySliding |= groups.get(g).sliding();
        }
        this.sliding = anySliding;
        this.prefixCaching = prefixCaching;
    }

    /** The one group of a model without sliding-window layers: every layer of {@code layout}, full attention. */
    public static KvGroup allLayers(KvLayout layout) {
        int[] layers = new int[layout.layers()];
        for (int l = 0; l < layers.length; l++) layers[l] = l;
        return new KvGroup(0, 0, layers);
    }

    public List<KvGroup> groups() {
        return groups;
    }

    /** The pool of group 0 (the only one of a one-group model; the full-attention one of a hybrid model). */
    public BlockPool pool() {
        return pools[0];
    }

    public BlockPool pool(int group) {
        return pools[group];
    }

    public int blockSize() {
        return blockSize;
    }

    public boolean prefixCaching() {
        return prefixCaching;
    }

    /** Whether some group is a sliding-window group (then {@link #slide} releases blocks). */
    public boolean sliding() {
        return sliding;
    }

    /** The key under which {@code group} caches the block whose chain key is {@code chainKey}. */
    public BlockKey cacheKey(int group, BlockKey chainKey) {
        return group == 0 ? chainKey : groups.get(group).key(chainKey);
    }

    /**
     * Leading blocks of {@code keys} that every group can serve from the device, never covering
     * the last of {@code numTokens} tokens (at least one token is always computed, for its logits).
     *
     * @return number of blocks; hit tokens = blocks * blockSize
     */
    public int prefixHitBlocks(List<BlockKey> keys, int numTokens) {
        if (!prefixCaching) {
            return 0;
        }
        int limit = Math.min(keys.size(), (numTokens - 1) / blockSize);
        for (KvGroup g : groups) {
            if (!g.sliding()) {
                int n = 0;
                while (n < limit && cachedBlock(g.index(), keys.get(n)) >= 0) {
                    n++;
                }
                limit = n;
            }
        }
        if (!sliding) {
            return limit;
        }
        for (int n = limit; n > 0; n--) {
            if (windowsServe(keys, n)) {
                return n;
            }
        }
        return 0;
    }

    /** Whether every window group holds the blocks of the window that ends at block {@code n}. */
    private boolean windowsServe(List<BlockKey> keys, int n) {
        for (KvGroup g : groups) {
            if (g.sliding()) {
                for (int i = g.firstReadBlock(n * blockSize, blockSize); i < n; i++) {
                    if (cachedBlock(g.index(), keys.get(i)) < 0) {
                        return false;
                    }
                }
            }
        }
        return true;
    }

    private int cachedBlock(int group, BlockKey chainKey) {
        return pools[group].lookup(cacheKey(group, chainKey));
    }

    /**
     * Admits a request with no blocks yet: in each group attaches the cached blocks of the first
     * {@code hitBlocks} that the group reads (all of them, or the window ending at the hit) and
     * allocates new blocks so that positions {@code [0, positions)} are covered. All or nothing.
     *
     * @return false (and changes nothing in any group) when some pool lacks free blocks
     * @throws IllegalStateException if the request already has tables, or a hit block is not
     *         cached (the hit was not computed by {@link #prefixHitBlocks} just before)
     */
    public boolean admit(long requestId, List<BlockKey> keys, int hitBlocks, int positions) {
        if (tables.containsKey(requestId)) {
            throw new IllegalStateException("request " + requestId + " already holds blocks");
        }
        int total = Math.max(hitBlocks, blocksFor(positions));
        if (blocksShort(keys, hitBlocks, positions) > 0) {
            return false;
        }
        Table t = new Table(groups.size(), total);
        for (KvGroup g : groups) {
            BlockPool pool = pools[g.index()];
            int[] table = t.blocks[g.index()];
            int first = g.firstReadBlock(hitBlocks * blockSize, blockSize);
            for (int i = first; i < hitBlocks; i++) {
                int b = cachedBlock(g.index(), keys.get(i));
                pool.retain(b);
                table[i] = b;
            }
            for (int i = hitBlocks; i < total; i++) {
                table[i] = pool.allocate();
            }
            t.released[g.index()] = first;
            t.cachedBlocks[g.index()] = hitBlocks;
        }
        t.size = total;
        tables.put(requestId, t);
        return true;
    }

    /**
     * How many free blocks {@link #admit} with these arguments lacks now, in the group that lacks
     * the most: 0 when it would succeed. Cached hit blocks that no request holds sit in the free
     * queue, so attaching them uses up free blocks too.
     *
     * @throws IllegalStateException when a hit block is not cached in a group that reads it
     */
    public int blocksShort(List<BlockKey> keys, int hitBlocks, int positions) {
        int shortest = 0;
        for (KvGroup g : groups) {
            shortest = Math.max(shortest, blocksTaken(g, keys, hitBlocks, positions) - pools[g.index()].freeCount());
        }
        return shortest;
    }

    /**
     * Free blocks an admission of positions {@code [0, positions)} with {@code hitBlocks} cached
     * would take, in the group where it takes the most: its new blocks and its cached hit blocks
     * that are free (reference count 0, in the free queue).
     */
    public int blocksTaken(List<BlockKey> keys, int hitBlocks, int positions) {
        int most = 0;
        for (KvGroup g : groups) {
            most = Math.max(most, blocksTaken(g, keys, hitBlocks, positions));
        }
        return most;
    }

    private int blocksTaken(KvGroup g, List<BlockKey> keys, int hitBlocks, int positions) {
        BlockPool pool = pools[g.index()];
        int hitFree = 0;
        for (int i = g.firstReadBlock(hitBlocks * blockSize, blockSize); i < hitBlocks; i++) {
            int b = cachedBlock(g.index(), keys.get(i));
            if (b < 0) {
                throw new IllegalStateException("hit block " + i + " is not cached in " + g);
            }
            if (pool.refCount(b) == 0) {
                hitFree++;
            }
        }
        return (Math.max(hitBlocks, blocksFor(positions)) - hitBlocks) + hitFree;
    }

    /**
     * Grows every group's table to cover positions {@code [0, positions)}.
     *
     * @return false (and changes nothing) when some pool lacks free blocks
     */
    public boolean grow(long requestId, int positions) {
        Table t = table(requestId);
        int need = blocksFor(positions) - t.size;
        if (need <= 0) {
            return true;
        }
        for (BlockPool pool : pools) {
            if (pool.freeCount() < need) {
                return false;
            }
        }
        t.ensure(t.size + need);
        for (int g = 0; g < pools.length; g++) {
            for (int i = t.size; i < t.size + need; i++) {
                t.blocks[g][i] = pools[g].allocate();
            }
        }
        t.size += need;
        return true;
    }

    /** Blocks a request would need beyond its table to cover [0, positions), in each group. */
    public int blocksNeeded(long requestId, int positions) {
        Table t = tables.get(requestId);
        return Math.max(0, blocksFor(positions) - (t == null ? 0 : t.size));
    }

    public boolean hasTable(long requestId) {
        return tables.containsKey(requestId);
    }

    /** A copy of the request's table in group 0 (block ids in position order). */
    public int[] blockTable(long requestId) {
        Table t = table(requestId);
        return Arrays.copyOf(t.blocks[0], t.size);
    }

    /** A copy of the request's table in {@code group} (block ids in position order, {@link #NOT_HELD} before its window). */
    public int[] blockTable(long requestId, int group) {
        Table t = table(requestId);
        return Arrays.copyOf(t.blocks[group], t.size);
    }

    /** Copies of the request's tables, one per group, in group order. */
    public int[][] blockTables(long requestId) {
        Table t = table(requestId);
        int[][] out = new int[pools.length][];
        for (int g = 0; g < out.length; g++) {
            out[g] = Arrays.copyOf(t.blocks[g], t.size);
        }
        return out;
    }

    /** Block id holding block index {@code i} of the request in group 0. */
    public int blockAt(long requestId, int i) {
        return table(requestId).blocks[0][i];
    }

    /**
     * Registers in each group's prefix cache the held full blocks whose KV is written (blocks
     * below {@code kvWritten / blockSize}, whose chain keys are {@code keys}) under the group's key.
     *
     * @return the block indexes (ascending) whose keys entered group 0's prefix cache now; a key
     *         already cached by another block is not among them
     */
    public List<Integer> cacheFullBlocks(long requestId, List<BlockKey> keys, int kvWritten) {
        if (!prefixCaching) {
            return List.of();
        }
        Table t = table(requestId);
        int full = Math.min(Math.min(kvWritten / blockSize, keys.size()), t.size);
        List<Integer> added = new ArrayList<>(Math.max(0, full - t.cachedBlocks[0]));
        for (int g = 0; g < pools.length; g++) {
            BlockPool pool = pools[g];
            int[] table = t.blocks[g];
            for (int i = t.cachedBlocks[g]; i < full; i++) {
                if (table[i] == NOT_HELD) {
                    continue;
                }
                BlockKey k = cacheKey(g, keys.get(i));
                boolean absent = pool.lookup(k) < 0;
                if (pool.cache(table[i], k) && absent && g == 0) {
                    added.add(i);
                }
            }
            t.cachedBlocks[g] = Math.max(t.cachedBlocks[g], full);
        }
        return added;
    }

    /**
     * Releases, in every window group, the blocks no query at {@code nextPosition} or later can
     * read. Call after {@link #cacheFullBlocks} so that they stay in the prefix cache. A no-op for
     * a model without sliding-window layers.
     *
     * @return blocks released now, over all groups
     */
    public int slide(long requestId, int nextPosition) {
        if (!sliding) {
            return 0;
        }
        Table t = table(requestId);
        int n = 0;
        for (KvGroup g : groups) {
            int gi = g.index();
            int upTo = Math.min(t.size, g.firstReadBlock(nextPosition, blockSize));
            for (int i = t.released[gi]; i < upTo; i++) {
                if (t.blocks[gi][i] != NOT_HELD) {
                    pools[gi].release(t.blocks[gi][i]);
                    t.blocks[gi][i] = NOT_HELD;
                    n++;
                }
            }
            t.released[gi] = Math.max(t.released[gi], upTo);
        }
        return n;
    }

    /**
     * Releases every block the request holds, in every group, last block first, so that a
     * prefix's head is evicted last. No-op for a request without a table.
     */
    public void free(long requestId) {
        Table t = tables.remove(requestId);
        if (t == null) {
            return;
        }
        for (int g = 0; g < pools.length; g++) {
            for (int i = t.size - 1; i >= 0; i--) {
                if (t.blocks[g][i] != NOT_HELD) {
                    pools[g].release(t.blocks[g][i]);
                }
            }
        }
    }

    /** Blocks the request holds in {@code group}. */
    public int heldBlocks(long requestId, int group) {
        Table t = table(requestId);
        int n = 0;
        for (int i = 0; i < t.size; i++) {
            if (t.blocks[group][i] != NOT_HELD) n++;
        }
        return n;
    }

    /** Requests holding blocks. */
    public int activeRequests() {
        return tables.size();
    }

    /** Drops the device prefix cache of every group. */
    public void resetPrefixCache() {
        for (BlockPool pool : pools) {
            pool.resetPrefixCache();
        }
        tables.forEachValue(t -> Arrays.fill(t.cachedBlocks, 0));
    }

    /**
     * Checks that every table entry a request holds is a block with a reference in its group's
     * pool, that window groups hold nothing before the window of the request's next position
     * {@code nextPosition.apply(id)} and that the pools' own invariants hold; throws
     * IllegalStateException naming the first broken one. For tests, after any step.
     */
    public void checkInvariants(java.util.function.LongToIntFunction nextPosition) {
        for (BlockPool pool : pools) {
            pool.checkInvariants();
        }
        tables.forEach((id, t) -> checkTable(id, t, nextPosition.applyAsInt(id)));
    }

    /** The checks of {@link #checkInvariants} on the table of one request whose next position is {@code next}. */
    private void checkTable(long id, Table t, int next) {
        for (KvGroup g : groups) {
            int[] table = t.blocks[g.index()];
            int firstRead = Math.min(t.size, g.firstReadBlock(next, blockSize));
            for (int i = 0; i < t.size; i++) {
                if (table[i] != NOT_HELD && pools[g.index()].refCount(table[i]) <= 0) {
                    throw new IllegalStateException("request " + id + " holds block " + table[i] + " of "
                            + g + " with reference count " + pools[g.index()].refCount(table[i]));
                }
                if (i < firstRead && table[i] != NOT_HELD) {
                    throw new IllegalStateException("request " + id + " at position " + next
                            + " still holds block " + i + " of " + g + ", which left its window");
                }
                if (i >= firstRead && table[i] == NOT_HELD) {
                    throw new IllegalStateException("request " + id + " at position " + next
                            + " lacks block " + i + " of " + g + ", which its next query reads");
                }
            }
        }
    }

    private int blocksFor(int positions) {
        return (positions + blockSize - 1) / blockSize;
    }

    private Table table(long requestId) {
        Table t = tables.get(requestId);
        if (t == null) {
            throw new IllegalStateException("request " + requestId + " holds no blocks");
        }
        return t;
    }
}

package io.kvtier.kv;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Per-request block tables of a hybrid model, one per {@link KvGroup}, each over the group's own
 * {@link BlockPool}, and the device prefix-cache match across groups. Block index {@code i} of a
 * request covers positions {@code [i * blockSize, (i+1) * blockSize)} in every group; its chain
 * key {@code keys.get(i)} is shared, and each group caches its block under
 * {@link KvGroup#key}.
 *
 * <p>Rules (docs/kv-groups.md):
 * <ul>
 *   <li>A full-attention group holds every block of the request.</li>
 *   <li>A sliding-window group holds only blocks some later query can read: {@link #slide}
 *       releases the blocks before {@link KvGroup#firstReadBlock}; a released block that is cached
 *       stays in the prefix cache (evictable), and its table entry becomes -1, so no stale block
 *       id is ever handed to the kernel.</li>
 *   <li>A prefix hit is the longest prefix every group can serve: full groups need all its blocks,
 *       window groups the blocks inside the window that ends at the hit; the last prompt token is
 *       never a hit.</li>
 * </ul>
 * Admission and growth are all or nothing across groups. Engine thread only.
 */
public final class GroupedKvCacheManager {

    /** A table entry for a block this group does not hold (before the window). */
    public static final int NOT_HELD = -1;

    private final List<KvGroup> groups;
    private final List<BlockPool> pools;
    private final int blockSize;
    private final boolean prefixCaching;
    private final Map<Long, int[][]> tables = new HashMap<>();
    private final Map<Long, int[]> sizes = new HashMap<>();
    /** Per request and group: leading blocks already registered in the prefix cache. */
    private final Map<Long, int[]> cachedBlocks = new HashMap<>();
    /** Per request and group: leading blocks already released by {@link #slide}. */
    private final Map<Long, int[]> released = new HashMap<>();

    /**
     * @param groups the model's groups ({@link KvGroups#of})
     * @param pools  one pool per group, in group order, all with the same block size
     * @throws IllegalArgumentException when the lists differ in length or the block sizes differ
     */
    public GroupedKvCacheManager(List<KvGroup> groups, List<BlockPool> pools, boolean prefixCaching) {
        if (groups.isEmpty() || groups.size() != pools.size()) {
            throw new IllegalArgumentException(groups.size() + " groups need as many pools, got " + pools.size());
        }
        this.groups = List.copyOf(groups);
        this.pools = List.copyOf(pools);
        this.blockSize = pools.getFirst().layout().blockSize();
        for (int g = 0; g < groups.size(); g++) {
            if (groups.get(g).index() != g || pools.get(g).layout().blockSize() != blockSize) {
                throw new IllegalArgumentException("group " + groups.get(g) + " at " + g + " with "
                        + pools.get(g).layout() + ": groups must be in index order with equal block sizes");
            }
        }
        this.prefixCaching = prefixCaching;
    }

    public List<KvGroup> groups() {
        return groups;
    }

    public BlockPool pool(int group) {
        return pools.get(group);
    }

    public int blockSize() {
        return blockSize;
    }

    /**
     * Leading blocks of {@code keys} that every group can serve from the device, never covering
     * the last of {@code numTokens} tokens.
     */
    public int prefixHitBlocks(List<BlockKey> keys, int numTokens) {
        if (!prefixCaching) {
            return 0;
        }
        int limit = Math.min(keys.size(), (numTokens - 1) / blockSize);
        for (KvGroup g : groups) {
            if (!g.sliding()) {
                int n = 0;
                while (n < limit && cachedBlock(g, keys.get(n)) >= 0) {
                    n++;
                }
                limit = n;
            }
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
                    if (cachedBlock(g, keys.get(i)) < 0) {
                        return false;
                    }
                }
            }
        }
        return true;
    }

    private int cachedBlock(KvGroup g, BlockKey chainKey) {
        return pools.get(g.index()).lookup(g.key(chainKey));
    }

    /**
     * Admits a request with no blocks yet: in each group attaches the cached blocks of the first
     * {@code hitBlocks} that the group reads (all of them, or the window ending at the hit) and
     * allocates new blocks so that positions {@code [0, positions)} are covered.
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
        for (KvGroup g : groups) {
            BlockPool pool = pools.get(g.index());
            int hitFree = 0;
            for (int i = g.firstReadBlock(hitBlocks * blockSize, blockSize); i < hitBlocks; i++) {
                int b = cachedBlock(g, keys.get(i));
                if (b < 0) {
                    throw new IllegalStateException("hit block " + i + " of request " + requestId + " is not cached in " + g);
                }
                if (pool.refCount(b) == 0) hitFree++;
            }
            if (pool.freeCount() - hitFree < total - hitBlocks) {
                return false;
            }
        }
        int[][] t = new int[groups.size()][];
        int[] first = new int[groups.size()];
        for (KvGroup g : groups) {
            BlockPool pool = pools.get(g.index());
            int[] table = new int[Math.max(8, total)];
            java.util.Arrays.fill(table, NOT_HELD);
            first[g.index()] = g.firstReadBlock(hitBlocks * blockSize, blockSize);
            for (int i = first[g.index()]; i < hitBlocks; i++) {
                int b = cachedBlock(g, keys.get(i));
                pool.retain(b);
                table[i] = b;
            }
            for (int i = hitBlocks; i < total; i++) {
                table[i] = pool.allocate();
            }
            t[g.index()] = table;
        }
        tables.put(requestId, t);
        sizes.put(requestId, new int[] {total});
        cachedBlocks.put(requestId, filled(hitBlocks));
        released.put(requestId, first);
        return true;
    }

    /**
     * Grows every group's table to cover positions {@code [0, positions)}.
     *
     * @return false (and changes nothing) when some pool lacks free blocks
     */
    public boolean grow(long requestId, int positions) {
        int[][] t = tables(requestId);
        int size = sizes.get(requestId)[0];
        int need = blocksFor(positions) - size;
        if (need <= 0) {
            return true;
        }
        for (BlockPool pool : pools) {
            if (pool.freeCount() < need) {
                return false;
            }
        }
        for (KvGroup g : groups) {
            int[] table = t[g.index()];
            if (table.length < size + need) {
                table = java.util.Arrays.copyOf(table, Math.max(size + need, table.length * 2));
                java.util.Arrays.fill(table, size, table.length, NOT_HELD);
                t[g.index()] = table;
            }
            for (int i = size; i < size + need; i++) {
                table[i] = pools.get(g.index()).allocate();
            }
        }
        sizes.get(requestId)[0] = size + need;
        return true;
    }

    /**
     * Releases, in every window group, the blocks no query at {@code nextPosition} or later can
     * read. Call after {@link #cacheFullBlocks} so that they stay in the prefix cache.
     *
     * @return blocks released now, over all groups
     */
    public int slide(long requestId, int nextPosition) {
        int[][] t = tables(requestId);
        int[] rel = released.get(requestId);
        int size = sizes.get(requestId)[0];
        int n = 0;
        for (KvGroup g : groups) {
            int upTo = Math.min(size, g.firstReadBlock(nextPosition, blockSize));
            for (int i = rel[g.index()]; i < upTo; i++) {
                if (t[g.index()][i] != NOT_HELD) {
                    pools.get(g.index()).release(t[g.index()][i]);
                    t[g.index()][i] = NOT_HELD;
                    n++;
                }
            }
            rel[g.index()] = Math.max(rel[g.index()], upTo);
        }
        return n;
    }

    /** A copy of the request's table in {@code group} (block ids in position order, {@link #NOT_HELD} before its window). */
    public int[] blockTable(long requestId, int group) {
        return java.util.Arrays.copyOf(tables(requestId)[group], sizes.get(requestId)[0]);
    }

    /**
     * Registers in each group's prefix cache the held full blocks whose KV is written (blocks
     * below {@code kvWritten / blockSize}) under the group's key.
     *
     * @return blocks that entered a prefix cache now, over all groups
     */
    public int cacheFullBlocks(long requestId, List<BlockKey> keys, int kvWritten) {
        if (!prefixCaching) {
            return 0;
        }
        int[][] t = tables(requestId);
        int[] done = cachedBlocks.get(requestId);
        int full = Math.min(Math.min(kvWritten / blockSize, keys.size()), sizes.get(requestId)[0]);
        int added = 0;
        for (KvGroup g : groups) {
            BlockPool pool = pools.get(g.index());
            for (int i = done[g.index()]; i < full; i++) {
                int b = t[g.index()][i];
                if (b == NOT_HELD) continue;
                BlockKey k = g.key(keys.get(i));
                boolean absent = pool.lookup(k) < 0;
                if (pool.cache(b, k) && absent) added++;
            }
            done[g.index()] = Math.max(done[g.index()], full);
        }
        return added;
    }

    /** Releases every block the request holds, in every group, last block first. */
    public void free(long requestId) {
        int[][] t = tables.remove(requestId);
        if (t == null) {
            return;
        }
        int size = sizes.remove(requestId)[0];
        cachedBlocks.remove(requestId);
        released.remove(requestId);
        for (KvGroup g : groups) {
            for (int i = size - 1; i >= 0; i--) {
                if (t[g.index()][i] != NOT_HELD) {
                    pools.get(g.index()).release(t[g.index()][i]);
                }
            }
        }
    }

    /** Blocks the request holds in {@code group}. */
    public int heldBlocks(long requestId, int group) {
        int n = 0;
        int[] table = tables(requestId)[group];
        for (int i = 0; i < sizes.get(requestId)[0]; i++) {
            if (table[i] != NOT_HELD) n++;
        }
        return n;
    }

    private int blocksFor(int positions) {
        return (positions + blockSize - 1) / blockSize;
    }

    private int[] filled(int v) {
        int[] a = new int[groups.size()];
        java.util.Arrays.fill(a, v);
        return a;
    }

    private int[][] tables(long requestId) {
        int[][] t = tables.get(requestId);
        if (t == null) {
            throw new IllegalStateException("request " + requestId + " holds no blocks");
        }
        return t;
    }
}

package io.kvtier.kv;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Per-request block tables over the {@link BlockPool}, and the device prefix cache match.
 * Requests are named by a long id; keys are the request's chained block keys (one per full
 * block of known tokens, see {@link BlockHasher}). Engine thread only.
 */
public final class KvCacheManager {

    private final BlockPool pool;
    private final boolean prefixCaching;
    private final Map<Long, Table> tables = new HashMap<>();

    /** One request's blocks: position p lives in {@code blocks[p / blockSize]}. */
    private static final class Table {
        int[] blocks = new int[8];
        int size;
        /** Leading blocks already registered in the prefix cache (or found there). */
        int cachedBlocks;

        void add(int b) {
            if (size == blocks.length) {
                blocks = java.util.Arrays.copyOf(blocks, size * 2);
            }
            blocks[size++] = b;
        }
    }

    public KvCacheManager(BlockPool pool, boolean prefixCaching) {
        this.pool = pool;
        this.prefixCaching = prefixCaching;
    }

    public BlockPool pool() {
        return pool;
    }

    public int blockSize() {
        return pool.layout().blockSize();
    }

    public boolean prefixCaching() {
        return prefixCaching;
    }

    /**
     * Leading blocks of {@code keys} cached on the device, never covering the last of
     * {@code numTokens} tokens (at least one token is always computed, for its logits).
     *
     * @return number of blocks; hit tokens = blocks * blockSize
     */
    public int prefixHitBlocks(List<BlockKey> keys, int numTokens) {
        if (!prefixCaching) {
            return 0;
        }
        int max = Math.min(keys.size(), (numTokens - 1) / blockSize());
        int n = 0;
        while (n < max && pool.lookup(keys.get(n)) >= 0) {
            n++;
        }
        return n;
    }

    /**
     * Admits a request with no blocks yet: attaches its first {@code hitBlocks} blocks from the
     * device prefix cache and allocates new blocks so that positions [0, positions) are
     * covered. All or nothing.
     *
     * @return false (and changes nothing) if the pool lacks free blocks
     * @throws IllegalStateException if the request already has a table
     */
    public boolean admit(long requestId, List<BlockKey> keys, int hitBlocks, int positions) {
        if (tables.containsKey(requestId)) {
            throw new IllegalStateException("request " + requestId + " already holds blocks");
        }
        if (blocksShort(keys, hitBlocks, positions) > 0) {
            return false;
        }
        int need = pool.layout().blocksFor(positions) - hitBlocks;
        Table t = new Table();
        for (int i = 0; i < hitBlocks; i++) {
            int b = pool.lookup(keys.get(i));
            pool.retain(b);
            t.add(b);
        }
        t.cachedBlocks = hitBlocks;
        for (int i = 0; i < need; i++) {
            t.add(pool.allocate());
        }
        tables.put(requestId, t);
        return true;
    }

    /**
     * How many free blocks {@link #admit} with these arguments lacks now: 0 when it would succeed.
     * Cached hit blocks that no request holds sit in the free queue, so attaching them uses up
     * free blocks too.
     */
    public int blocksShort(List<BlockKey> keys, int hitBlocks, int positions) {
        int need = pool.layout().blocksFor(positions) - hitBlocks;
        int hitFree = 0;
        for (int i = 0; i < hitBlocks; i++) {
            if (pool.refCount(pool.lookup(keys.get(i))) == 0) {
                hitFree++;
            }
        }
        return Math.max(0, need - (pool.freeCount() - hitFree));
    }

    /**
     * Grows an admitted request's table to cover positions [0, positions).
     *
     * @return false (and changes nothing) if the pool lacks free blocks
     */
    public boolean grow(long requestId, int positions) {
        Table t = table(requestId);
        int need = pool.layout().blocksFor(positions) - t.size;
        if (need > pool.freeCount()) {
            return false;
        }
        for (int i = 0; i < need; i++) {
            t.add(pool.allocate());
        }
        return true;
    }

    /** Blocks a request would need beyond its table to cover [0, positions). */
    public int blocksNeeded(long requestId, int positions) {
        Table t = tables.get(requestId);
        return Math.max(0, pool.layout().blocksFor(positions) - (t == null ? 0 : t.size));
    }

    public boolean hasTable(long requestId) {
        return tables.containsKey(requestId);
    }

    /** A copy of the request's block table (block ids in position order). */
    public int[] blockTable(long requestId) {
        Table t = table(requestId);
        return java.util.Arrays.copyOf(t.blocks, t.size);
    }

    /** Block id holding block index {@code i} of the request. */
    public int blockAt(long requestId, int i) {
        return table(requestId).blocks[i];
    }

    /**
     * Registers in the prefix cache every full block whose KV is written: blocks below
     * {@code kvWritten / blockSize}, whose keys are {@code keys}.
     *
     * @return the block indexes (ascending) whose keys entered the prefix cache now; a key already
     *         cached by another block is not among them
     */
    public List<Integer> cacheFullBlocks(long requestId, List<BlockKey> keys, int kvWritten) {
        if (!prefixCaching) {
            return List.of();
        }
        Table t = table(requestId);
        int full = Math.min(kvWritten / blockSize(), keys.size());
        List<Integer> added = new java.util.ArrayList<>(Math.max(0, full - t.cachedBlocks));
        for (int i = t.cachedBlocks; i < full; i++) {
            boolean absent = pool.lookup(keys.get(i)) < 0;
            if (pool.cache(t.blocks[i], keys.get(i)) && absent) {
                added.add(i);
            }
        }
        t.cachedBlocks = Math.max(t.cachedBlocks, full);
        return added;
    }

    /**
     * Releases the request's blocks, last block first, so that a prefix's head is evicted last.
     * No-op for a request without a table.
     */
    public void free(long requestId) {
        Table t = tables.remove(requestId);
        if (t == null) {
            return;
        }
        for (int i = t.size - 1; i >= 0; i--) {
            pool.release(t.blocks[i]);
        }
    }

    /** Requests holding blocks. */
    public int activeRequests() {
        return tables.size();
    }

    /** Drops the device prefix cache. */
    public void resetPrefixCache() {
        pool.resetPrefixCache();
        for (Table t : tables.values()) {
            t.cachedBlocks = 0;
        }
    }

    private Table table(long requestId) {
        Table t = tables.get(requestId);
        if (t == null) {
            throw new IllegalStateException("request " + requestId + " holds no blocks");
        }
        return t;
    }
}

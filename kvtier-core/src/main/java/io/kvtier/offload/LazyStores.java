package io.kvtier.offload;

import io.kvtier.kv.BlockKey;
import io.kvtier.kv.BlockPool;
import io.kvtier.tier.HostTier;
import io.kvtier.tier.StorePlan;
import io.kvtier.tier.TierIndex;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Lazy host stores ({@link StorePolicy.Mode#LAZY}): chunks completed at commit wait here, still
 * cached on the device, until one of their blocks comes within the horizon of the free queue's
 * head ({@link BlockPool#nearEviction}); then the chunk is stored together with the chunks before
 * it in its chain that the host tier lacks (a chunk without its parent could never be hit). A
 * pending chunk whose block leaves the device prefix cache first is dropped and counted.
 *
 * <p>Why this cannot lose a request's KV or overwrite a block being copied: blocks in use have a
 * reference count above 0 and are not in the free queue, so only blocks no request holds are
 * ever near eviction; the store job takes a reference on every block it copies
 * ({@link HostStores#submit}), which takes it out of the free queue until the job completes.
 * Engine thread only.
 */
final class LazyStores {

    /**
     * A completed chunk not stored yet.
     *
     * @param chainKeys chunk keys of its chain, from chunk 0 up to this one (shared by a commit's chunks)
     * @param index     this chunk's index in the chain
     * @param blockKeys the device block keys of this chunk, in order
     * @param parent    the parent chunk's key (the namespace digest for chunk 0)
     * @param tokens    the chunk's token ids
     */
    private record Pending(List<BlockKey> chainKeys, int index, List<BlockKey> blockKeys, BlockKey parent, int[] tokens) {
        BlockKey key() {
            return chainKeys.get(index);
        }
    }

    private final StorePolicy policy;
    private final ChunkChain chain;
    private final BlockPool pool;
    private final HostTier host;
    private final OffloadStats stats;
    private final HostStores stores;
    private final Map<BlockKey, Pending> byChunk = new HashMap<>();
    private final Map<BlockKey, BlockKey> chunkOfBlock = new HashMap<>();

    LazyStores(StorePolicy policy, ChunkChain chain, BlockPool pool, HostTier host, OffloadStats stats, HostStores stores) {
        this.policy = policy;
        this.chain = chain;
        this.pool = pool;
        this.host = host;
        this.stats = stats;
        this.stores = stores;
        pool.alsoOnEvictions(this::onEvicted);
    }

    /**
     * Remembers the request's admitted chunks {@code [fromChunk, fromChunk + count)} (their blocks
     * are cached on the device now); chunks already in the host tier or already pending are skipped.
     */
    void record(SequenceView r, int fromChunk, int count) {
        if (count <= 0) {
            return;
        }
        List<BlockKey> chainKeys = new ArrayList<>(fromChunk + count);
        for (int c = 0; c < fromChunk + count; c++) {
            chainKeys.add(chain.key(r, c));
        }
        chainKeys = List.copyOf(chainKeys);
        int bpc = chain.blocksPerChunk();
        for (int c = fromChunk; c < fromChunk + count; c++) {
            BlockKey key = chainKeys.get(c);
            if (byChunk.containsKey(key) || host.index().state(key) != TierIndex.EntryState.ABSENT) {
                continue;
            }
            List<BlockKey> blocks = List.copyOf(r.blockKeys().subList(c * bpc, (c + 1) * bpc));
            byChunk.put(key, new Pending(chainKeys, c, blocks, chain.parent(r, c), chain.tokens(r, c)));
            for (BlockKey b : blocks) {
                chunkOfBlock.put(b, key);
            }
        }
    }

    /** Chunks waiting for the horizon. */
    int pendingChunks() {
        return byChunk.size();
    }

    /**
     * Stores every pending chunk with a block among the first {@code horizonBlocks} blocks of the
     * free queue (called at the start of every step, before the scheduler allocates).
     */
    void scan(long epoch) {
        if (byChunk.isEmpty()) {
            return;
        }
        Set<BlockKey> due = new LinkedHashSet<>();
        for (int b : pool.nearEviction(policy.horizonBlocks())) {
            BlockKey k = pool.keyOf(b);
            BlockKey chunkKey = k == null ? null : chunkOfBlock.get(k);
            if (chunkKey != null) {
                due.add(chunkKey);
            }
        }
        for (BlockKey key : due) {
            Pending p = byChunk.get(key);
            if (p != null) {
                storeChain(p, epoch);
            }
        }
    }

    /**
     * Stores every pending chunk, each with the chunks before it that the host tier lacks (a
     * reset of the device prefix cache evicts every block at once: each has reached the horizon).
     * Chain tails go first, so one job takes a whole chain; a chunk the host tier cannot take now
     * stays pending (and is then counted as evicted by the reset).
     */
    void storeAll(long epoch) {
        List<Pending> tailsFirst = new ArrayList<>(byChunk.values());
        tailsFirst.sort(java.util.Comparator.comparingInt(Pending::index).reversed());
        for (Pending p : tailsFirst) {
            if (byChunk.get(p.key()) == p) {
                storeChain(p, epoch);
            }
        }
    }

    /** Stores {@code p} and the chunks before it that the host tier lacks, head first, in one job. */
    private void storeChain(Pending p, long epoch) {
        int first = p.index();
        while (first > 0 && host.index().state(p.chainKeys().get(first - 1)) == TierIndex.EntryState.ABSENT) {
            first--;
        }
        List<Pending> toStore = new ArrayList<>();
        for (int c = first; c <= p.index(); c++) {
            Pending q = byChunk.get(p.chainKeys().get(c));
            if (q == null || !onDevice(q)) {
                // A chunk before p was evicted unstored (or never admitted): p could never be hit.
                drop(p, OffloadStats.PARENT_NOT_STORED);
                return;
            }
            toStore.add(q);
        }
        List<BlockKey> keys = new ArrayList<>();
        List<BlockKey> parents = new ArrayList<>();
        for (Pending q : toStore) {
            keys.add(q.key());
            parents.add(q.parent());
        }
        Set<BlockKey> keep = new HashSet<>(p.chainKeys().subList(0, first));
        int fits = host.index().fittingPrefix(keys, keep);
        if (fits < keys.size()) {
            stats.storeRefusals++; // entries pinned or being stored fill the tier now: retried at the next scan
            return;
        }
        StorePlan.Accepted accepted = stores.accept(keys, parents, keep, epoch);
        if (accepted == null) {
            return; // retried at the next scan
        }
        for (Pending q : toStore) {
            forget(q);
        }
        stores.submit(OffloadJob.TIER_JOB, first, keys, parents, accepted,
                i -> deviceBlocks(toStore.get(i)), i -> toStore.get(i).tokens(), epoch);
    }

    private boolean onDevice(Pending q) {
        for (BlockKey b : q.blockKeys()) {
            if (pool.lookup(b) < 0) {
                return false;
            }
        }
        return true;
    }

    private int[] deviceBlocks(Pending q) {
        int[] dev = new int[q.blockKeys().size()];
        for (int j = 0; j < dev.length; j++) {
            dev[j] = pool.lookup(q.blockKeys().get(j));
        }
        return dev;
    }

    private void onEvicted(List<BlockKey> keys) {
        for (BlockKey k : keys) {
            BlockKey chunkKey = chunkOfBlock.get(k);
            Pending p = chunkKey == null ? null : byChunk.get(chunkKey);
            if (p != null) {
                drop(p, OffloadStats.EVICTED_BEFORE_STORE);
            }
        }
    }

    private void drop(Pending p, String reason) {
        forget(p);
        stats.notStored(reason, p.blockKeys().size());
    }

    private void forget(Pending p) {
        byChunk.remove(p.key());
        for (BlockKey b : p.blockKeys()) {
            chunkOfBlock.remove(b, p.key());
        }
    }

    /** Forgets every pending chunk (the tiers were reset). */
    void clear() {
        byChunk.clear();
        chunkOfBlock.clear();
    }
}

package io.kvtier.engine;

import io.kvtier.kv.BlockPool;
import io.kvtier.kv.Namespace;
import io.kvtier.offload.OffloadConfig;
import io.kvtier.offload.OffloadScheduler;
import io.kvtier.offload.transfer.AsyncTransferEngine;
import io.kvtier.offload.transfer.ChunkCopier;
import io.kvtier.tier.CachePolicy;
import io.kvtier.tier.HostTier;
import io.kvtier.tier.KvEvents;

/**
 * How to build the offload tiers of an engine.
 *
 * @param hostBytes  memory of the host tier in bytes (headers included); 0 with
 *                   {@code hostChunks} 0 turns offloading off
 * @param hostChunks capacity in chunks instead of bytes (wins when > 0)
 * @param eviction   {@code lru} or {@code arc}
 * @param config     chunking, decode blocks, deadlines, admission
 */
public record OffloadSetup(long hostBytes, int hostChunks, String eviction, OffloadConfig config) {

    public static final OffloadSetup OFF = new OffloadSetup(0, 0, "lru", OffloadConfig.DEFAULT);

    public OffloadSetup {
        if (hostBytes < 0 || hostChunks < 0) {
            throw new IllegalArgumentException("host tier size must not be negative");
        }
        CachePolicy.named(eviction, 1); // validates the name
    }

    public boolean enabled() {
        return hostBytes > 0 || hostChunks > 0;
    }

    /**
     * The offload scheduler for {@code pool}: a host tier, an {@link AsyncTransferEngine}
     * between the pool's slab and the host slots. Null when offloading is off.
     *
     * @throws IllegalArgumentException if the host tier cannot hold a single chunk
     */
    public OffloadScheduler build(BlockPool pool, Namespace namespace, KvEvents events) {
        if (!enabled()) {
            return null;
        }
        long payload = config.blocksPerChunk() * pool.layout().bytesPerBlock();
        int tokens = config.blocksPerChunk() * pool.layout().blockSize();
        HostTier host = hostChunks > 0
                ? new HostTier(hostChunks, payload, tokens, CachePolicy.named(eviction, hostChunks), events)
                : HostTier.ofBytes(hostBytes, payload, tokens, eviction, events);
        AsyncTransferEngine transfers = new AsyncTransferEngine(new ChunkCopier(pool.slab(), pool.layout().bytesPerBlock(), host.slab()));
        return new OffloadScheduler(config, pool, host, transfers, namespace);
    }
}

package io.kvtier.offload;

import io.kvtier.kv.BlockPool;
import io.kvtier.offload.transfer.TransferEngine;
import io.kvtier.tier.HostTier;

/**
 * What the parts of one KV group's {@link OffloadScheduler} share: its knobs, chunk chain, device
 * pool, host tier, transfer engine, job registry, counters, and the disk and remote tiers behind
 * the host tier (null for none).
 */
record GroupTier(OffloadConfig config, ChunkChain chain, BlockPool pool, HostTier host, TransferEngine transfers, JobRegistry jobs,
                 OffloadStats stats, DiskChain disk, RemoteChain remote) {
}

package io.kvtier.offload;

import io.kvtier.tier.TierIndex;
import io.kvtier.tier.disk.DiskStore;
import io.kvtier.tier.disk.RestartScan;

/**
 * What the offload scheduler needs to put a disk tier behind the host tier.
 *
 * @param index      the disk tier's bookkeeping (named {@code disk}), capacity in chunks
 * @param store      its files (the transfer engine's disk thread reads and writes them), or null
 *                   for a simulated disk (the replay's transfer engine moves no bytes)
 * @param scan       the restart scan feeding {@code index}, or null for an empty directory
 * @param policy     when chunks are written to disk
 * @param admitAfter write a chunk to disk only from its N-th use (1 = always)
 */
public record DiskTierParts(TierIndex index, DiskStore store, RestartScan scan, DiskWritePolicy policy, int admitAfter) {
}

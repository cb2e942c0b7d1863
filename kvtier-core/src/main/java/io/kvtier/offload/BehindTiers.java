package io.kvtier.offload;

import io.kvtier.tier.HostTier;
import io.kvtier.tier.TierIndex;
import io.kvtier.offload.transfer.TransferEngine;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.stream.Stream;

/**
 * The tiers behind one scheduler's host tier, the disk and the remote one (either absent), and what
 * their lifetime asks of the scheduler: built from their parts, cleared on a reset, checked, flushed
 * from the host at a clean shutdown, closed. {@link OffloadScheduler} keeps the decisions (what to
 * store, load, promote); this keeps the tiers' housekeeping out of it. Engine thread only.
 */
final class BehindTiers {

    /** The disk tier's chain, or null without a disk tier. */
    final DiskChain disk;
    /** The remote tier's chain, or null without a remote tier. */
    final RemoteChain remote;
    /** The tiers present, disk first. */
    private final List<TierBehindHost> all;

    /**
     * @param chunkBytes bytes of one chunk ({@code blocksPerChunk} device blocks)
     * @param namespace  the scheduler's namespace digest
     * @param headFirst  whether a chunk is hit only with every chunk before it (a full-attention group)
     */
    BehindTiers(OffloadConfig config, DiskTierParts diskParts, RemoteTierParts remoteParts, HostTier host,
                TransferEngine transfers, JobRegistry jobs, OffloadStats stats, long chunkBytes, int blockSize,
                io.kvtier.kv.BlockKey namespace, boolean headFirst) {
        int chunk = config.blocksPerChunk();
        this.disk = diskParts == null ? null : new DiskChain(diskParts.index(), diskParts.store(), diskParts.scan(), host,
                transfers, jobs, stats, diskParts.policy(), diskParts.admitAfter(), chunk, chunkBytes,
                config.jobDeadline().toNanos(), namespace, headFirst);
        this.remote = remoteParts == null ? null : new RemoteChain(remoteParts, host, transfers, jobs, stats, chunk, chunkBytes,
                chunk * blockSize, namespace);
        this.all = Stream.<TierBehindHost>of(disk, remote).filter(Objects::nonNull).toList();
    }

    /** Drops every entry of every tier (the disk deletes its files too), as of the new {@code epoch}. */
    void clear(long epoch) {
        all.forEach(t -> t.clear(epoch));
    }

    /** Each tier's invariants; throws IllegalStateException naming the broken one. */
    void checkInvariants() {
        all.forEach(TierBehindHost::checkInvariants);
    }

    void close() {
        all.forEach(TierBehindHost::close);
    }

    /**
     * With a disk tier written on host eviction ({@code --disk-write-policy on-evict}): {@code awaitJobs}
     * (the jobs in flight end), then writes every host chunk absent from disk and {@code awaitJobs}
     * again. A no-op otherwise.
     */
    void flushHost(long epoch, Runnable awaitJobs) {
        if (disk == null || !disk.writeOnEvict()) {
            return;
        }
        awaitJobs.run();
        if (disk.flushHost(epoch)) {
            awaitJobs.run();
        }
    }

    /** Adopts what the disk tier's restart scan found so far (no-op without a disk tier). */
    void drainScan(long epoch) {
        if (disk != null) {
            disk.drainScan(epoch);
        }
    }

    /** Waits for the disk tier's restart scan and adopts what it found (no-op without a disk tier). */
    void awaitScan(Duration timeout, long epoch) {
        if (disk != null) {
            disk.awaitScan(timeout, epoch);
        }
    }

    io.kvtier.tier.disk.DiskIndexScan.Progress scanProgress() {
        return disk == null ? null : disk.scanProgress();
    }

    String readOnlyReason() {
        return disk == null ? null : disk.readOnlyReason();
    }

    RemoteStats remoteStats() {
        return remote == null ? null : remote.stats();
    }

    TierIndex diskIndex() {
        return disk == null ? null : disk.index();
    }
}

package io.kvtier.offload;

import io.kvtier.kv.BlockKey;
import java.util.List;

/**
 * A transfer the offload scheduler started: one load or one store of whole chunks between device
 * blocks and one tier. Holds a reference on each of its device blocks from creation to its real
 * completion (ARCHITECTURE §3.2). Immutable.
 */
public sealed interface OffloadJob {

    long id();

    long requestId();

    /** Device blocks the transfer reads (store) or writes (load), each referenced once by this job. */
    int[] deviceBlocks();

    /** Chunk keys, head first. */
    List<BlockKey> chunkKeys();

    /** Cache epoch the job was created in; completions from an older epoch are ignored. */
    long epoch();

    /** {@link System#nanoTime()} after which the job fails for its request. */
    long deadlineNanos();

    String tier();

    /**
     * Load of blocks [firstBlock, firstBlock + blocks) of a request. {@code chunkBlocks[i]} is how
     * many of chunk i's blocks are loaded (the first chunk may be partly on the device already);
     * {@code chunkTiers[i]} is the tier the hit is counted for ({@code disk} for a promoted chunk).
     */
    record Load(long id, long requestId, String tier, int firstBlock, int blocks, int[] deviceBlocks,
                List<BlockKey> chunkKeys, int[] chunkBlocks, String[] chunkTiers, long epoch, long deadlineNanos)
            implements OffloadJob {
    }

    /**
     * Store of the chunks the tier accepted, for every request that completed chunks in one engine
     * step (one job per step, not one per request): {@code parts} say whose chunks {@code chunkKeys}
     * are, in order, each part's keys following the previous part's.
     */
    record Store(long id, String tier, int[] deviceBlocks, List<BlockKey> chunkKeys, List<StorePart> parts, long epoch,
                 long deadlineNanos) implements OffloadJob {

        public Store {
            parts = List.copyOf(parts);
            int n = 0;
            for (StorePart p : parts) {
                if (p.offset() != n) {
                    throw new IllegalArgumentException("store part of request " + p.requestId() + " starts at key " + p.offset()
                            + ", expected " + n);
                }
                n += p.chunks();
            }
            if (n != chunkKeys.size()) {
                throw new IllegalArgumentException("store parts cover " + n + " keys of " + chunkKeys.size());
            }
        }

        /** One request's store of its chunks [firstChunk, firstChunk + chunkKeys.size()). */
        public Store(long id, long requestId, String tier, int firstChunk, int[] deviceBlocks, List<BlockKey> chunkKeys,
                     long epoch, long deadlineNanos) {
            this(id, tier, deviceBlocks, chunkKeys, List.of(new StorePart(requestId, firstChunk, 0, chunkKeys.size())), epoch,
                    deadlineNanos);
        }

        /** The request of a one-part store; {@link #TIER_JOB} for a store of several requests (see {@link #parts}). */
        @Override
        public long requestId() {
            return parts.size() == 1 ? parts.get(0).requestId() : TIER_JOB;
        }
    }

    /**
     * One request's chunks in a {@link Store}: keys {@code [offset, offset + chunks)} of the job are
     * the request's chunks from {@code firstChunk} on that the tier accepted.
     */
    record StorePart(long requestId, int firstChunk, int offset, int chunks) {
    }

    /** Request id of jobs that belong to a tier, not to a request (disk writes, promotions). */
    long TIER_JOB = -1;

    /** A job between two tiers: it belongs to no request and touches no device block. */
    sealed interface TierJob extends OffloadJob permits DiskWrite, Promote, RemoteProbe, RemoteWrite, RemotePromote {
        @Override
        default long requestId() {
            return TIER_JOB;
        }

        @Override
        default int[] deviceBlocks() {
            return new int[0];
        }

        @Override
        default String tier() {
            return "disk";
        }
    }

    /**
     * Host -> disk: the host entries of {@code chunkKeys} are pinned (read) and the disk entries are
     * being stored. {@code deleted} are evicted disk keys whose files the job deletes first.
     */
    record DiskWrite(long id, List<BlockKey> chunkKeys, List<BlockKey> deleted, long epoch, long deadlineNanos)
            implements TierJob {
    }

    /**
     * Disk -> host (promotion): the disk entries of {@code chunkKeys} are pinned (read) and the host
     * entries are being stored; afterwards a request loads them from the host like any host hit.
     */
    record Promote(long id, List<BlockKey> chunkKeys, long epoch, long deadlineNanos) implements TierJob {
    }

    /** Asks the remote store which of {@code chunkKeys} exist (head first); touches no slot. */
    record RemoteProbe(long id, List<BlockKey> chunkKeys, long epoch, long deadlineNanos) implements TierJob {
        @Override
        public String tier() {
            return "remote";
        }
    }

    /**
     * Host -> remote: the host entries of {@code chunkKeys} are pinned (read) while their values are
     * sent; {@code bytes} counts against the remote tier's bytes-in-flight budget until it ends.
     */
    record RemoteWrite(long id, List<BlockKey> chunkKeys, long bytes, long epoch, long deadlineNanos) implements TierJob {
        @Override
        public String tier() {
            return "remote";
        }
    }

    /**
     * Remote -> host (promotion): the host entries of {@code chunkKeys} are being stored from the
     * remote values; afterwards a request loads them from the host like any host hit.
     */
    record RemotePromote(long id, List<BlockKey> chunkKeys, long epoch, long deadlineNanos) implements TierJob {
        @Override
        public String tier() {
            return "remote";
        }
    }
}

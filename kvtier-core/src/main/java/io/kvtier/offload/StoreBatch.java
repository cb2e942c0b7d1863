package io.kvtier.offload;

import io.kvtier.kv.BlockKey;
import io.kvtier.kv.BlockPool;
import io.kvtier.offload.transfer.ChunkCopy;
import io.kvtier.offload.transfer.StoreJob;
import io.kvtier.offload.transfer.TransferEngine;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The host store job of one engine step, being assembled (issue 16: one store job per step, not
 * one per request). Each request that completes chunks in the step adds the chunks the host tier
 * accepted for it at its commit; {@link #submit} then starts them as one transfer job with one
 * registry entry and one completion.
 *
 * <p>The tier rules hold from {@link #add} on, before the job exists: the chunks' host slots are
 * already reserved (STORING: invisible to lookups, never evicted), and every device block a chunk
 * reads is referenced at once, so a request that finishes in the same step cannot free a block
 * the job will still copy. Engine thread only; the lists are reused from job to job.
 */
final class StoreBatch {

    private final BlockPool pool;
    private final JobRegistry jobs;
    private final TransferEngine transfers;
    private final long deadlineNanos;
    private final List<ChunkCopy> copies = new ArrayList<>();
    private final List<BlockKey> keys = new ArrayList<>();
    private final List<OffloadJob.StorePart> parts = new ArrayList<>();
    private int[] sources = new int[64];
    private int sourceCount;

    /**
     * @param deadlineNanos how long a submitted job may take, ns ({@link OffloadConfig#jobDeadline()})
     */
    StoreBatch(BlockPool pool, JobRegistry jobs, TransferEngine transfers, long deadlineNanos) {
        this.pool = pool;
        this.jobs = jobs;
        this.transfers = transfers;
        this.deadlineNanos = deadlineNanos;
    }

    boolean isEmpty() {
        return parts.isEmpty();
    }

    /**
     * Adds request {@code requestId}'s chunks to the step's job: {@code copies.get(i)} stores the
     * chunk of key {@code copies.get(i).key()}, the request's chunks from {@code firstChunk} on that
     * the tier accepted (slots reserved). References every device block the copies read.
     */
    void add(long requestId, int firstChunk, List<ChunkCopy> chunkCopies) {
        if (chunkCopies.isEmpty()) {
            return;
        }
        parts.add(new OffloadJob.StorePart(requestId, firstChunk, keys.size(), chunkCopies.size()));
        for (ChunkCopy c : chunkCopies) {
            for (int i = 0; i < c.blockCount(); i++) {
                int b = c.deviceBlock(i);
                pool.retain(b);
                if (sourceCount == sources.length) {
                    sources = Arrays.copyOf(sources, 2 * sources.length);
                }
                sources[sourceCount++] = b;
            }
            copies.add(c);
            keys.add(c.key());
        }
    }

    /**
     * Starts the step's job, if any chunk was added since the last one: registered, then handed
     * to the transfer engine (which may run it at once on this thread).
     */
    void submit(String tier, long epoch) {
        if (parts.isEmpty()) {
            return;
        }
        long id = jobs.newId();
        long deadline = transfers.nanoTime() + deadlineNanos;
        OffloadJob.Store job = new OffloadJob.Store(id, tier, Arrays.copyOf(sources, sourceCount), List.copyOf(keys), parts,
                epoch, deadline);
        StoreJob transfer = new StoreJob(id, copies, deadline);
        copies.clear();
        keys.clear();
        parts.clear();
        sourceCount = 0;
        jobs.add(job);
        transfers.submit(transfer);
    }
}

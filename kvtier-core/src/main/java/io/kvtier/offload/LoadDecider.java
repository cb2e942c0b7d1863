package io.kvtier.offload;

import io.kvtier.kv.BlockPool;
import io.kvtier.offload.transfer.TransferEngine;

/**
 * Load or recompute ({@code --load-policy}) for one KV group's scheduler: cuts a hit to the chunks
 * cheaper to load than to recompute ({@link #decide}), and answers for a hit whose device blocks
 * are short at admission whether to wait, recompute or hold the line ({@link #whenBlocksShort}).
 * The estimates are {@link LoadCosts}'; this class feeds them the scheduler's state (the lanes'
 * queues, the stores in flight, the transfer clock) and counts each request's decision and wait
 * once in {@link OffloadStats#loadDecisions()}. Engine thread only.
 */
final class LoadDecider {

    private final OffloadConfig config;
    private final LoadCosts costs;
    private final JobRegistry jobs;
    private final BlockPool pool;
    private final TransferEngine transfers;
    private final OffloadStats stats;
    private final int blockSize;
    private final LoadWaits waits = new LoadWaits();

    LoadDecider(OffloadConfig config, LoadCosts costs, JobRegistry jobs, BlockPool pool, TransferEngine transfers,
                OffloadStats stats) {
        this.config = config;
        this.costs = costs;
        this.jobs = jobs;
        this.pool = pool;
        this.transfers = transfers;
        this.stats = stats;
        this.blockSize = pool.layout().blockSize();
    }

    private int chunk() {
        return config.blocksPerChunk();
    }

    /**
     * With {@code --load-policy faster}: cuts a hit or promotion from {@link OffloadScheduler#lookup}
     * to the leading chunks estimated cheaper to load than to recompute under the engine's load
     * {@code c} ({@link LoadCosts}; possibly to a miss); with {@code never}, to a miss. Counted in
     * {@link OffloadStats#loadDecisions()} if {@code count}. With {@code always} returns {@code found}.
     */
    Lookup decide(int deviceHitBlocks, Lookup found, Contention c, boolean count) {
        if (config.loadPolicy() == LoadPolicy.ALWAYS) {
            return found;
        }
        return costs.decide(config.loadPolicy(), found, deviceHitBlocks, chunk(), blockSize, jobs.queuedBlocks(chunk()), c, stats,
                count);
    }

    /** {@link #decide} for request {@code r}, counted only the first time it is decided (until it finishes). */
    Lookup decide(SequenceView r, int deviceHitBlocks, Lookup found, Contention c) {
        boolean count = config.loadPolicy() != LoadPolicy.ALWAYS && !(found instanceof Lookup.Miss) && !(found instanceof Lookup.Wait)
                && waits.firstDecision(r.id());
        return decide(deviceHitBlocks, found, c, count);
    }

    /**
     * With {@code --load-policy faster}: request {@code r}'s hit cannot be admitted, the device blocks
     * short by {@code missing}. Waits while the stores in flight free them sooner than recomputing
     * would cost, for at most that recompute's cost ({@link LoadCosts#whenBlocksShort}); counted in
     * {@link OffloadStats#loadDecisions()}. Other policies: {@link BlockWait#STALL}.
     *
     * @param waitedNanos how long (transfer clock) the request has been passed so far
     */
    BlockWait whenBlocksShort(SequenceView r, int deviceHitBlocks, Lookup.Hit hit, int missing, long waitedNanos, Contention c) {
        if (config.loadPolicy() != LoadPolicy.FASTER) {
            return BlockWait.STALL;
        }
        BlockWait w = costs.whenBlocksShort(hit.blocks(), (long) deviceHitBlocks * blockSize, blockSize,
                jobs.storesUntilFree(pool, missing), transfers.nanoTime(), waitedNanos, jobs.queuedBlocks(chunk()), c);
        stats.hitsWaited += w == BlockWait.WAIT && waits.firstWait(r.id()) ? 1 : 0;
        if (w == BlockWait.RECOMPUTE) {
            stats.recomputedWhenShort++;
            stats.tokensRecomputedByChoice += (long) hit.blocks() * blockSize;
        }
        return w;
    }

    /**
     * Whether request {@code r}'s wait (answered {@link BlockWait#WAIT} by {@link #whenBlocksShort})
     * would still be the answer with {@code missing} blocks short: a request behind it may pass only
     * with blocks the waiting one can spare, so the stores in flight still free its blocks sooner than
     * recomputing would cost. Counts nothing. False with other policies.
     */
    boolean waitStillPays(int deviceHitBlocks, Lookup.Hit hit, int missing, long waitedNanos, Contention c) {
        return config.loadPolicy() == LoadPolicy.FASTER
                && costs.whenBlocksShort(hit.blocks(), (long) deviceHitBlocks * blockSize, blockSize,
                        jobs.storesUntilFree(pool, missing), transfers.nanoTime(), waitedNanos, jobs.queuedBlocks(chunk()), c)
                        == BlockWait.WAIT;
    }

    /** A forward pass of shape {@code shape} took {@code nanos} of the transfer clock: the recompute cost estimate. */
    void onForward(StepShape shape, long nanos) {
        costs.onForward(shape, nanos);
    }

    /** The request is gone: its next decision and wait (under a reused id) are counted again. */
    void forget(long requestId) {
        waits.forget(requestId);
    }
}

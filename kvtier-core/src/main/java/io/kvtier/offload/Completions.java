package io.kvtier.offload;

import io.kvtier.kv.BlockPool;
import io.kvtier.offload.transfer.TransferResult;
import java.util.ArrayList;
import java.util.List;

/**
 * Applies transfer completions for {@link OffloadScheduler} exactly once: each job's tier
 * bookkeeping by its kind, the transfer counters, and the release of the device blocks the job
 * held. Engine thread only.
 */
final class Completions {

    private final JobRegistry jobs;
    private final OffloadStats stats;
    private final LoadCosts costs;
    private final HostLoads loads;
    private final HostStores stores;
    private final DiskChain disk;
    private final RemoteChain remote;
    private final BlockPool pool;
    private final int blocksPerChunk;

    Completions(JobRegistry jobs, OffloadStats stats, LoadCosts costs, HostLoads loads, HostStores stores, DiskChain disk,
                RemoteChain remote, BlockPool pool, int blocksPerChunk) {
        this.jobs = jobs;
        this.stats = stats;
        this.costs = costs;
        this.loads = loads;
        this.stores = stores;
        this.disk = disk;
        this.remote = remote;
        this.pool = pool;
        this.blocksPerChunk = blocksPerChunk;
    }

    private int chunk() {
        return blocksPerChunk;
    }

    /** Applies {@code results}; returns the loads that ended for requests still waiting (epoch {@code epoch}). */
    List<LoadDone> apply(List<TransferResult> results, long epoch) {
        if (results.isEmpty()) {
            return List.of(); // the common step with jobs in flight: nothing allocated
        }
        long t0 = System.nanoTime();
        List<LoadDone> done = new ArrayList<>();
        for (TransferResult res : results) {
            JobRegistry.Completed c = jobs.complete(res.jobId());
            if (c != null) { // else unknown or duplicate: nothing is released twice
                apply(c, res, epoch, done);
            }
        }
        stats.completionNanos += System.nanoTime() - t0;
        return done;
    }

    /** Applies one completed job; a load that ended for a waiting request is added to {@code done}. */
    private void apply(JobRegistry.Completed c, TransferResult res, long epoch, List<LoadDone> done) {
        boolean current = c.live() && c.job().epoch() == epoch;
        if (!current) {
            stats.staleCompletions++;
        }
        if (res.timedOut()) {
            stats.jobsTimedOut++;
        }
        boolean inbound = c.job() instanceof OffloadJob.Load || c.job() instanceof OffloadJob.Promote
                || c.job() instanceof OffloadJob.RemotePromote;
        // A load through the remote store took the remote lane's time, not the host's.
        String lane = c.job() instanceof OffloadJob.Load l ? l.lane() : c.job().tier();
        if (!(c.job() instanceof OffloadJob.RemoteProbe)) { // a probe moves no chunk
            (inbound ? stats.loads : stats.stores).addJob(lane, res.bytes(), res.nanos());
        }
        if (res.success() && inbound) {
            long blocks = c.job() instanceof OffloadJob.Load l ? l.blocks() : (long) c.job().chunkKeys().size() * chunk();
            costs.onLoad(lane, blocks, res.bytes(), res.nanos());
        } else if (res.success() && c.job() instanceof OffloadJob.Store s) {
            costs.onStore(s.deviceBlocks().length, res.nanos()); // how fast the blocks stores pin come free
        }
        switch (c.job()) {
            case OffloadJob.Load load -> {
                if (io.kvtier.tier.remote.RemoteTrace.ON) {
                    io.kvtier.tier.remote.RemoteTrace.mark("load " + load.id() + " applied: " + (res.success() ? "ok" : res.error()));
                }
                LoadDone d = loads.apply(load, res, current);
                if (d != null) {
                    done.add(d);
                }
            }
            case OffloadJob.Store store -> stores.apply(store, res, current, epoch);
            case OffloadJob.DiskWrite write -> disk.applyWrite(write, res, chunk() * pool.layout().bytesPerBlock());
            case OffloadJob.Promote promote -> disk.applyPromote(promote, res, current, chunk() * pool.layout().bytesPerBlock());
            case OffloadJob.RemoteProbe probe -> remote.applyProbe(probe, res);
            case OffloadJob.RemoteWrite write -> remote.applyWrite(write, res);
            case OffloadJob.RemotePromote promote -> remote.applyPromote(promote, res, current);
        }
        for (int b : c.job().deviceBlocks()) {
            pool.release(b);
        }
    }
}

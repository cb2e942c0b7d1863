package io.kvtier.engine;

import io.kvtier.offload.OffloadScheduler;
import io.kvtier.offload.OffloadStats;
import io.kvtier.offload.RemoteStats;
import io.kvtier.tier.TierIndex;
import io.kvtier.tier.disk.DiskIndexScan;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * An immutable copy of an engine's counters and gauges at one moment, taken on the engine thread
 * ({@link Engine#snapshot()}) so that other threads (a metrics scrape) can read it. It copies
 * {@link EngineStats} and {@link OffloadStats}; it is no second source: every number comes from
 * those or from the scheduler, the device pool and the tiers at the moment of the copy.
 *
 * @param running           requests admitted and computing
 * @param waiting           requests waiting for admission or parked on a load
 * @param deviceBlocks      blocks of the device pool
 * @param deviceBlocksFree  blocks with reference count 0 (cached ones included: they are reusable)
 * @param deviceBlocksCached blocks registered in the device prefix cache
 * @param engine            the engine's counters (tokens are token positions)
 * @param offload           the offload tiers' counters and usage, or null when offloading is off
 */
public record EngineSnapshot(int running, int waiting, int deviceBlocks, int deviceBlocksFree, int deviceBlocksCached,
                             Counters engine, Offload offload) {

    /**
     * The engine's counters.
     *
     * @param finishedBy            finished requests per reason
     * @param queriedTokens         see {@link EngineStats#queriedTokens()}
     * @param externalQueriedTokens see {@link EngineStats#externalQueriedTokens()}
     * @param externalHitTokens     see {@link EngineStats#externalHitTokens()}
     */
    public record Counters(long requests, Map<FinishReason, Long> finishedBy, long promptTokens, long generatedTokens,
                           long preemptions, long steps, long queriedTokens, long deviceHitTokens,
                           long externalQueriedTokens, long externalHitTokens) {
        public Counters {
            finishedBy = Map.copyOf(finishedBy);
        }
    }

    /**
     * Chunks a tier holds.
     *
     * @param tier     {@code host} or {@code disk}
     * @param used     slots in use (readable, being stored, or pinned)
     * @param capacity slots in all
     */
    public record TierUsage(String tier, int used, int capacity) {
    }

    /**
     * The offload tiers.
     *
     * @param stores   store jobs per destination tier (see {@link OffloadStats#stores()})
     * @param loads    load jobs per source tier (see {@link OffloadStats#loads()})
     * @param diskScan the disk tier's restart scan, or null without a disk tier
     * @param remote   the remote tier's counters (a copy), or null without a remote tier
     */
    public record Offload(Map<String, Long> externalHitTokens, Map<String, Long> blocksStored,
                          Map<String, Long> blocksLoaded, long loadFailures, long storeFailures, long storeRefusals,
                          long jobsTimedOut, Map<String, OffloadStats.Transfers> stores,
                          Map<String, OffloadStats.Transfers> loads, List<TierUsage> tiers,
                          DiskIndexScan.Progress diskScan, RemoteStats remote) {
        public Offload {
            externalHitTokens = Map.copyOf(externalHitTokens);
            blocksStored = Map.copyOf(blocksStored);
            blocksLoaded = Map.copyOf(blocksLoaded);
            stores = Map.copyOf(stores);
            loads = Map.copyOf(loads);
            tiers = List.copyOf(tiers);
        }
    }

    static EngineSnapshot of(Engine e) {
        EngineStats s = e.stats();
        Map<FinishReason, Long> by = new EnumMap<>(FinishReason.class);
        for (FinishReason r : FinishReason.values()) {
            by.put(r, s.finished(r));
        }
        Counters c = new Counters(s.requests(), by, s.promptTokens(), s.generatedTokens(), s.preemptions(), s.steps(),
                s.queriedTokens(), s.deviceHitTokens(), s.externalQueriedTokens(), s.externalHitTokens());
        Scheduler sch = e.scheduler();
        return new EngineSnapshot(sch.running().size(), sch.waiting().size() + sch.loading().size(),
                e.pool().numBlocks(), e.pool().freeCount(), e.pool().cachedCount(), c, offload(e.offload()));
    }

    private static Offload offload(OffloadScheduler off) {
        if (off == null) {
            return null;
        }
        OffloadStats o = off.stats();
        List<TierUsage> tiers = new ArrayList<>(2);
        tiers.add(usage(off.host().index()));
        TierIndex disk = off.diskIndex();
        if (disk != null) {
            tiers.add(usage(disk));
        }
        return new Offload(o.externalHitTokens(), o.blocksStored(), o.blocksLoaded(), o.loadFailures(), o.storeFailures(),
                o.storeRefusals(), o.jobsTimedOut(), o.stores(), o.loads(), tiers, off.diskScanProgress(),
                off.remoteStats() == null ? null : off.remoteStats().copy());
    }

    private static TierUsage usage(TierIndex t) {
        return new TierUsage(t.tierName(), t.capacity() - t.freeSlots(), t.capacity());
    }
}

package io.kvtier.engine;

import io.kvtier.offload.GroupStats;
import io.kvtier.offload.OffloadScheduler;
import io.kvtier.offload.OffloadStats;
import io.kvtier.offload.RemoteStats;
import io.kvtier.tier.TierIndex;
import io.kvtier.tier.disk.DiskIndexScan;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

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
     * @param externalHitTokensByTier see {@link EngineStats#externalHitTokensByTier()}
     */
    public record Counters(long requests, Map<FinishReason, Long> finishedBy, long promptTokens, long generatedTokens,
                           long preemptions, long steps, long queriedTokens, long deviceHitTokens,
                           long externalQueriedTokens, long externalHitTokens, Map<String, Long> externalHitTokensByTier) {
        public Counters {
            finishedBy = Collections.unmodifiableSortedMap(new TreeMap<>(finishedBy));
            externalHitTokensByTier = Collections.unmodifiableSortedMap(new TreeMap<>(externalHitTokensByTier));
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
     * @param groups   for a model with several KV groups, each group's own (group order; their
     *                 {@code groups} empty); empty for one group. The fields above are then the
     *                 sums over the groups ({@link GroupStats}): blocks, bytes, jobs and chunk slots
     *                 of every group. Hits are the engine's ({@link Counters}): counted once a request
     *                 finishes, its first admission's only
     */
    public record Offload(Map<String, Long> blocksStored,
                          Map<String, Long> blocksLoaded, long loadFailures, long storeFailures, long storeRefusals,
                          long jobsTimedOut, Map<String, OffloadStats.Transfers> stores,
                          Map<String, OffloadStats.Transfers> loads, List<TierUsage> tiers,
                          DiskIndexScan.Progress diskScan, RemoteStats remote, List<Offload> groups) {
        public Offload {
            groups = List.copyOf(groups);
            blocksStored = Collections.unmodifiableSortedMap(new TreeMap<>(blocksStored));
            blocksLoaded = Collections.unmodifiableSortedMap(new TreeMap<>(blocksLoaded));
            stores = Collections.unmodifiableSortedMap(new TreeMap<>(stores));
            loads = Collections.unmodifiableSortedMap(new TreeMap<>(loads));
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
                s.queriedTokens(), s.deviceHitTokens(), s.externalQueriedTokens(), s.externalHitTokens(),
                s.externalHitTokensByTier());
        Scheduler sch = e.scheduler();
        return new EngineSnapshot(sch.running().size(), sch.waiting().size() + sch.loading().size(),
                e.pool().numBlocks(), e.pool().freeCount(), e.pool().cachedCount(), c, offload(e.offload()));
    }

    private static Offload offload(OffloadScheduler off) {
        if (off == null) {
            return null;
        }
        if (!GroupStats.several(off)) {
            return offload(off.stats(), off.remoteStats(), tiers(List.of(off)), off.diskScanProgress(), List.of());
        }
        List<OffloadScheduler> all = GroupStats.schedulers(off);
        List<Offload> groups = new ArrayList<>(all.size());
        DiskIndexScan.Progress scan = null;
        for (OffloadScheduler g : all) {
            groups.add(offload(g.stats(), g.remoteStats(), tiers(List.of(g)), g.diskScanProgress(), List.of()));
            scan = DiskIndexScan.Progress.sum(scan, g.diskScanProgress());
        }
        return offload(GroupStats.total(off), GroupStats.remoteTotal(off), tiers(all), scan, groups);
    }

    private static Offload offload(OffloadStats o, RemoteStats remote, List<TierUsage> tiers,
                                   DiskIndexScan.Progress scan, List<Offload> groups) {
        return new Offload(o.blocksStored(), o.blocksLoaded(), o.loadFailures(), o.storeFailures(),
                o.storeRefusals(), o.jobsTimedOut(), o.stores(), o.loads(), tiers, scan,
                remote == null ? null : remote.copy(), groups);
    }

    /** The host tier's usage, then the disk tier's if there is one: each the sum over {@code schedulers}' tiers. */
    private static List<TierUsage> tiers(List<OffloadScheduler> schedulers) {
        int hostUsed = 0;
        int hostCapacity = 0;
        int diskUsed = 0;
        int diskCapacity = 0;
        for (OffloadScheduler g : schedulers) {
            TierUsage h = usage(g.host().index());
            hostUsed += h.used();
            hostCapacity += h.capacity();
            TierIndex disk = g.diskIndex();
            if (disk != null) {
                TierUsage d = usage(disk);
                diskUsed += d.used();
                diskCapacity += d.capacity();
            }
        }
        List<TierUsage> tiers = new ArrayList<>(2);
        tiers.add(new TierUsage(schedulers.getFirst().host().index().tierName(), hostUsed, hostCapacity));
        TierIndex disk = schedulers.getFirst().diskIndex();
        if (disk != null) {
            tiers.add(new TierUsage(disk.tierName(), diskUsed, diskCapacity));
        }
        return tiers;
    }

    private static TierUsage usage(TierIndex t) {
        return new TierUsage(t.tierName(), t.capacity() - t.freeSlots(), t.capacity());
    }
}

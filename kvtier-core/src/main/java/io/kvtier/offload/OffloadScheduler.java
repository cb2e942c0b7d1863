package io.kvtier.offload;

import io.kvtier.kv.BlockKey;
import io.kvtier.kv.BlockPool;
import io.kvtier.kv.KvGroup;
import io.kvtier.kv.Namespace;
import io.kvtier.offload.transfer.TransferEngine;
import io.kvtier.offload.transfer.TransferResult;
import io.kvtier.tier.HostTier;
import io.kvtier.tier.TierIndex;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The scheduler side of offloading (ARCHITECTURE §3, §4): finds external hits beyond the device
 * hit, starts load jobs for them, creates store jobs at commit for every full chunk whose KV is
 * written, and applies transfer completions exactly once. Engine thread only; the bytes move on
 * the {@link TransferEngine}'s threads.
 *
 * <p>A chunk is {@code blocksPerChunk} consecutive device blocks, keyed by its last block's key.
 * Block positions and counts here are in blocks of the request; tokens = blocks * blockSize.
 *
 * <p>A model with several KV groups ({@link KvGroup}) has one scheduler per group, each over its
 * group's device pool and its own tiers; the full-attention group's scheduler is the one the
 * engine talks to, and {@link #ofGroups} gives it the sliding-window groups' ones: lookups, loads,
 * rollbacks and waits then hold in every group ({@link WindowParts}, docs/kv-groups.md).
 */
public final class OffloadScheduler implements AutoCloseable {

    private final OffloadConfig config;
    private final BlockPool pool;
    private final HostTier host;
    private final TransferEngine transfers;
    private final BlockKey namespace;
    private final int blockSize;
    private final JobRegistry jobs = new JobRegistry();
    private final OffloadStats stats = new OffloadStats();
    /** The disk and remote tiers, either absent. */
    private final BehindTiers behind;
    private final ChunkChain chain;
    private final HostStores stores;
    private final HostLoads loads;
    private final Completions completions;
    private final LoadDecider decider;
    /** The group whose blocks this scheduler moves: null for group 0 (or a one-group model), whose keys are the chain keys. */
    private final KvGroup group;
    /** Requests as this group sees them (null for group 0, which sees them as they are). */
    private final GroupView.Views views;
    /** The sliding-window groups' schedulers, when this is group 0's of a model with several groups. */
    private WindowParts windows;
    private GroupTables tablesSeen;
    private java.util.function.LongFunction<int[]> ownTables;
    private long epoch;

    public OffloadScheduler(OffloadConfig config, BlockPool pool, HostTier host, TransferEngine transfers, Namespace namespace) {
        this(config, pool, host, transfers, namespace, null);
    }

    /**
     * With a disk tier behind the host tier ({@code diskParts} null for none); the transfer engine
     * must then run {@link io.kvtier.offload.transfer.DiskJob}s on the same disk store.
     */
    public OffloadScheduler(OffloadConfig config, BlockPool pool, HostTier host, TransferEngine transfers, Namespace namespace,
                            DiskTierParts diskParts) {
        this(config, pool, host, transfers, namespace, diskParts, null);
    }

    /**
     * With a disk tier and/or a remote tier behind the host tier (either part null for none); the
     * transfer engine must then run {@link io.kvtier.offload.transfer.RemoteJob}s on the same store.
     */
    public OffloadScheduler(OffloadConfig config, BlockPool pool, HostTier host, TransferEngine transfers, Namespace namespace,
                            DiskTierParts diskParts, RemoteTierParts remoteParts) {
        this(config, pool, host, transfers, namespace, diskParts, remoteParts, null);
    }

    /**
     * The scheduler of one sliding-window KV group {@code group} of a model with several groups
     * (null: group 0, as the other constructors): {@code pool} is the group's device pool, the
     * tiers are the group's own (their chunks hold the group's layers), the namespace should be
     * the group's ({@link KvGroup#key} of the model's digest, so its disk and remote entries live
     * apart). Give it to group 0's scheduler with {@link #ofGroups}.
     *
     * @throws IllegalArgumentException for a full-attention group other than group 0, or lazy stores
     *         in a window group (not built)
     */
    public OffloadScheduler(OffloadConfig config, BlockPool pool, HostTier host, TransferEngine transfers, Namespace namespace,
                            DiskTierParts diskParts, RemoteTierParts remoteParts, KvGroup group) {
        if (group != null && (group.index() == 0 || !group.sliding())) {
            throw new IllegalArgumentException("an offload part of its own is for a sliding-window group after group 0, got " + group);
        }
        if (group != null && config.storePolicy().lazy()) {
            throw new IllegalArgumentException("--store-policy lazy is not built for a model with sliding-window layers: use --store-policy eager");
        }
        this.group = group;
        this.views = group == null ? null : new GroupView.Views(group);
        if (namespace.blocksPerChunk() != config.blocksPerChunk()) {
            // The geometry seeds the key chain: a chunk of another geometry must never share a key.
            throw new IllegalArgumentException("namespace made for " + namespace.blocksPerChunk()
                    + " blocks per chunk, offloading with " + config.blocksPerChunk());
        }
        this.config = config;
        this.pool = pool;
        this.host = host;
        this.transfers = transfers;
        this.namespace = namespace.digest();
        this.blockSize = pool.layout().blockSize();
        this.behind = new BehindTiers(config, diskParts, remoteParts, host, transfers, jobs, stats,
                (long) config.blocksPerChunk() * pool.layout().bytesPerBlock(), blockSize, this.namespace,
                group == null || group.window() == 0);
        DiskChain disk = behind.disk;
        RemoteChain remote = behind.remote;
        this.chain = new ChunkChain(config.blocksPerChunk(), blockSize, this.namespace);
        this.stores = new HostStores(config, chain, pool, host, transfers, jobs, stats, disk, remote,
                group == null ? 0 : group.window());
        LoadCosts costs = new LoadCosts(config.blocksPerChunk() * blockSize);
        this.loads = new HostLoads(new GroupTier(config, chain, pool, host, transfers, jobs, stats, disk, remote), stores,
                group == null);
        this.completions = new Completions(jobs, stats, costs, loads, stores, disk, remote, pool, config.blocksPerChunk());
        this.decider = new LoadDecider(config, costs, jobs, pool, transfers, stats);
    }

    /**
     * Makes {@code full} (group 0's scheduler) the one scheduler of a model with several KV
     * groups: {@code windowParts} are the sliding-window groups' ({@link #OffloadScheduler(OffloadConfig,
     * BlockPool, HostTier, TransferEngine, Namespace, DiskTierParts, RemoteTierParts, KvGroup)}),
     * in group order; it closes them when it closes.
     *
     * @return {@code full}
     * @throws IllegalArgumentException if a part is not a window group's or the chunk sizes differ
     */
    public static OffloadScheduler ofGroups(OffloadScheduler full, List<OffloadScheduler> windowParts) {
        if (full.group != null || full.windows != null) {
            throw new IllegalArgumentException("groups are given to group 0's scheduler, once");
        }
        for (OffloadScheduler p : windowParts) {
            if (p.group == null || p.chunk() != full.chunk() || p.blockSize != full.blockSize) {
                throw new IllegalArgumentException("a window group's part must have its group and group 0's chunk geometry");
            }
        }
        full.windows = windowParts.isEmpty() ? null : new WindowParts(full, windowParts);
        if (full.windows != null) {
            full.loads.promoteRemoteHitsFirst(); // the groups' loads start together, after every group's promotion
        }
        return full;
    }

    /** The group this scheduler moves blocks of (null for group 0). */
    KvGroup group() {
        return group;
    }

    /** The sliding-window groups' schedulers (empty for a one-group model or a window part). */
    public List<OffloadScheduler> windowParts() {
        return windows == null ? List.of() : windows.parts();
    }

    /** The request as this scheduler's group sees it (its keys qualified with the group). */
    SequenceView view(SequenceView r) {
        return views == null ? r : views.of(r);
    }

    int blockSize() {
        return blockSize;
    }

    long epoch() {
        return epoch;
    }

    JobRegistry jobs() {
        return jobs;
    }

    HostStores stores() {
        return stores;
    }

    public OffloadConfig config() {
        return config;
    }

    public OffloadStats stats() {
        return stats;
    }

    public HostTier host() {
        return host;
    }

    private int chunk() {
        return config.blocksPerChunk();
    }

    /**
     * The longest ready prefix in the tiers beyond the device hit, in whole chunks, never covering
     * the request's last token (at least one token is always computed). No side effects.
     */
    public Lookup lookup(SequenceView r, int deviceHitBlocks) {
        int maxBlocks = (r.numTokens() - 1) / blockSize;
        int endChunk = Math.min(maxBlocks, r.blockKeys().size()) / chunk();
        Lookup found = lookup(view(r), deviceHitBlocks, endChunk);
        return windows == null ? found : windows.fit(r, deviceHitBlocks, found);
    }

    /** {@link #lookup} of the chunks from the one holding block {@code deviceHitBlocks} to {@code endChunk} (exclusive) of {@code r}'s view. */
    Lookup lookup(SequenceView r, int deviceHitBlocks, int endChunk) {
        return loads.lookup(r, deviceHitBlocks, endChunk, epoch);
    }

    /**
     * Load or recompute ({@link LoadDecider#decide(int, Lookup, Contention, boolean)}): {@code found}
     * from {@link #lookup} cut to the leading chunks cheaper to load under the engine's load {@code c}
     * (possibly a miss); {@code found} itself with {@code --load-policy always}. Counted.
     */
    public Lookup decide(int deviceHitBlocks, Lookup found, Contention c) {
        return decider.decide(deviceHitBlocks, found, c, true);
    }

    /**
     * {@link #decide} for request {@code r}, counted once while it waits to be admitted; with several
     * KV groups, a hit cut short is walked down to a boundary whose window every window group serves.
     */
    public Lookup decide(SequenceView r, int deviceHitBlocks, Lookup found, Contention c) {
        Lookup cut = decider.decide(r, deviceHitBlocks, found, c);
        return windows == null || cut == found ? cut : windows.fit(r, deviceHitBlocks, cut);
    }

    /**
     * Request {@code r}'s hit (as {@link #decide} left it) cannot be admitted, group 0's device blocks
     * short by {@code missing}: wait, recompute or hold the line ({@link LoadDecider#whenBlocksShort}).
     *
     * @param waitedNanos how long ({@link #clockNanos()}) the request has been passed so far
     */
    public BlockWait whenBlocksShort(SequenceView r, int deviceHitBlocks, Lookup.Hit hit, int missing, long waitedNanos,
                                     Contention c) {
        return decider.whenBlocksShort(r, deviceHitBlocks, hit, missing, waitedNanos, c);
    }

    /** Whether a waiting hit would still wait with {@code missing} blocks short ({@link LoadDecider#waitStillPays}); counts nothing. */
    public boolean waitStillPays(int deviceHitBlocks, Lookup.Hit hit, int missing, long waitedNanos, Contention c) {
        return decider.waitStillPays(deviceHitBlocks, hit, missing, waitedNanos, c);
    }

    /** The clock of transfer times, ns (the transfer engine's: virtual in a replay). */
    public long clockNanos() {
        return transfers.nanoTime();
    }

    /** A forward pass of shape {@code shape} took {@code nanos} of {@link #clockNanos()}: the recompute cost estimate. */
    public void onForward(StepShape shape, long nanos) {
        decider.onForward(shape, nanos);
    }

    /**
     * Starts promoting the disk (or else remote) part of a {@link Lookup.Promote} into the host tier:
     * the longest prefix of it that the host tier can hold beside the request's host chunks (parents
     * first, evicting others as the policy says; {@link HostPromotion}). The request should ask again
     * once it completes (its lookup answers {@link Lookup.Wait} meanwhile); it then loads what the host
     * holds and recomputes the rest. Disk or remote chunks that do not fit are counted in
     * {@link OffloadStats#blocksNotStored()} when the host part is loaded without them.
     *
     * @return {@link Lookup.Wait} if a promotion started; else the host part alone as a
     *         {@link Lookup.Hit}, or {@link Lookup.Miss}
     */
    public Lookup promote(SequenceView r, int deviceHitBlocks, Lookup.Promote p) {
        return windows == null ? promoteOwn(r, deviceHitBlocks, p) : windows.promote(r, deviceHitBlocks, p);
    }

    /** {@link #promote} in this scheduler's group only; {@code p} with no disk or remote chunks starts nothing. */
    Lookup promoteOwn(SequenceView request, int deviceHitBlocks, Lookup.Promote p) {
        return loads.promote(view(request), deviceHitBlocks, p, epoch);
    }

    /**
     * Starts the load of a {@link Lookup.Hit} into the request's block table, whose blocks
     * [deviceHitBlocks, deviceHitBlocks + blocks) are freshly allocated. The job references those
     * blocks until it completes; the request must wait for {@link LoadDone}.
     *
     * @return tokens loaded per tier
     */
    public Map<String, Integer> startLoad(SequenceView r, int deviceHitBlocks, int blocks, int[] blockTable) {
        if (windows != null) {
            throw new IllegalStateException("a model with several KV groups loads into every group's table");
        }
        return startLoadOwn(r, deviceHitBlocks, blocks, blockTable);
    }

    /**
     * {@link #startLoad} with the request's block table of every KV group ({@code blockTables[g]},
     * freshly allocated from {@code deviceHitBlocks} on in every group): window groups load the
     * window that ends at the hit, and the request's {@link LoadDone} comes once every group's
     * load ended, cut to the longest prefix valid in all groups.
     *
     * @return tokens loaded per tier (group 0's count: a hit is counted once)
     */
    public Map<String, Integer> startLoad(SequenceView r, int deviceHitBlocks, int blocks, int[][] blockTables) {
        if (windows != null) {
            windows.startLoad(r, deviceHitBlocks, blocks, blockTables);
        }
        return startLoadOwn(r, deviceHitBlocks, blocks, blockTables[0]);
    }

    /** {@link #startLoad} in this scheduler's group only, into its table {@code blockTable}. */
    Map<String, Integer> startLoadOwn(SequenceView request, int deviceHitBlocks, int blocks, int[] blockTable) {
        return loads.start(view(request), deviceHitBlocks, blocks, blockTable, epoch);
    }

    /**
     * Called at commit for every request scheduled in the step (finishing ones included), with
     * {@code kvWritten} = positions whose KV now exists. Every full chunk below it not yet handled
     * joins the step's store job now (§3.1; started by {@link #submitStores}, or by the next call
     * that looks at jobs, for every request of the step at once): the longest prefix of them that the host
     * tier can take, evicting by its policy but never the request's own earlier chunks (a hole
     * would make the rest unreachable). Chunks a host tier of this capacity can never hold with
     * their parents (chunk index >= capacity) are counted in {@link OffloadStats#blocksNotStored()}
     * once and skipped for good; chunks that do not fit only because entries are pinned or being
     * stored now are retried at the request's next commit (the cursor advances past what was
     * accepted). {@code blockTables} gives a request's block table by its id, asked for only when
     * a store is due (one function for every call: nothing is allocated per commit).
     */
    public void onCommit(SequenceView r, int kvWritten, java.util.function.LongFunction<int[]> blockTables) {
        if (windows != null) {
            throw new IllegalStateException("a model with several KV groups commits with every group's tables");
        }
        stores.onCommit(r, kvWritten, blockTables, epoch);
    }

    /**
     * Starts the step's store job: the chunks every {@link #onCommit} of the step accepted, as one
     * transfer job for all the step's requests (in every KV group). Called by the engine once its
     * commits are done; the other calls that look at jobs start a pending one first.
     */
    public void submitStores() {
        stores.submitStep(epoch);
        for (OffloadScheduler p : windowParts()) {
            p.submitStores();
        }
    }

    /** A request's block table in one KV group: {@code KvCacheManager::blockTable}. */
    @FunctionalInterface
    public interface GroupTables {
        int[] blockTable(long requestId, int group);
    }

    /**
     * {@link #onCommit} with every KV group's tables: each group's scheduler stores its own chunks
     * by its group's rule (a window group only chunks still inside the next query's window).
     */
    public void onCommit(SequenceView r, int kvWritten, GroupTables blockTables) {
        if (blockTables != tablesSeen) {
            // The engine passes one object for its whole life: one function per scheduler, not one per commit.
            int g = group == null ? 0 : group.index();
            tablesSeen = blockTables;
            ownTables = id -> blockTables.blockTable(id, g);
        }
        stores.onCommit(view(r), kvWritten, ownTables, epoch);
        if (windows != null) {
            windows.onCommit(r, kvWritten, blockTables);
        }
    }

    /** Applies every completed transfer; returns the loads that ended for requests still waiting. */
    public List<LoadDone> poll() {
        return windows == null ? pollOwn() : windows.poll();
    }

    /** {@link #poll} of this scheduler's group only. */
    List<LoadDone> pollOwn() {
        stores.submitStep(epoch);
        stores.scan(epoch); // lazy stores: first, so the free queue is the one the step's allocations will see
        behind.drainScan(epoch);
        if (jobs.isEmpty()) {
            return List.of(); // every job is registered until it completes: nothing to collect
        }
        return apply(transfers.poll());
    }

    /**
     * Blocks until at least one job completes or {@code timeout} passes, then applies what completed.
     * Used by the engine when no request can make progress until a transfer ends.
     */
    public List<LoadDone> awaitAny(Duration timeout) {
        return windows == null ? awaitAnyOwn(timeout) : windows.awaitAny(timeout);
    }

    /** {@link #awaitAny} of this scheduler's group only. */
    List<LoadDone> awaitAnyOwn(Duration timeout) {
        stores.submitStep(epoch);
        List<Long> ids = jobs.ids();
        if (ids.isEmpty()) {
            return List.of();
        }
        List<TransferResult> results = new ArrayList<>(transfers.poll());
        if (results.isEmpty()) {
            results.addAll(transfers.awaitAny(ids, timeout));
        }
        return apply(results);
    }

    private List<LoadDone> apply(List<TransferResult> results) {
        return completions.apply(results, epoch);
    }

    /** Whether the request has jobs in flight (a preempted request is not re-admitted until they end, §3.6). */
    public boolean hasJobs(long requestId) {
        submitStores();
        return jobs.hasJobs(requestId) || windows != null && windows.hasJobs(requestId);
    }

    /** Device blocks of group 0 that become free when pending stores complete. */
    public int blocksFreedByStores() {
        stores.submitStep(epoch);
        return jobs.blocksFreedByStores(pool);
    }

    /** Device blocks of KV group {@code group} that become free when pending stores complete. */
    public int blocksFreedByStores(int group) {
        return group == 0 ? blocksFreedByStores() : windows.part(group).blocksFreedByStores();
    }

    /** Whether any job is in flight (in any group). */
    public boolean busy() {
        submitStores();
        return !jobs.isEmpty() || windows != null && windows.busy();
    }

    /** The request is gone (finished or aborted): forget its cursor; its jobs run on, holding their blocks. */
    public void onFinished(long requestId) {
        stores.forget(requestId);
        decider.forget(requestId);
        if (views != null) {
            views.forget(requestId);
        }
        if (windows != null) {
            windows.onFinished(requestId);
        }
    }

    /**
     * Drops every tier entry and forgets every request's progress. Jobs in flight keep their
     * resources until they complete; their results are then ignored (§3.7).
     *
     * @return the loads abandoned (none of their blocks counts as loaded): the load may still write
     *         their requests' target blocks, so each request must give those blocks up (be
     *         preempted) and recompute
     */
    public List<LoadDone> resetCache() {
        // Loads group 0 ended while a window group's still ran: abandoned too.
        submitStores(); // the step's chunks become a job like any other: orphaned below
        List<LoadDone> waiting = windows == null ? new ArrayList<>() : windows.resetCache();
        epoch++;
        waiting.addAll(loads.abandonAll());
        host.index().clear();
        behind.clear(epoch); // the disk deletes its files too
        stores.clear();
        return waiting;
    }

    /** Lazy stores: the device prefix cache is about to be dropped, so every pending chunk is stored now (no-op if eager). */
    public void beforeDeviceCacheReset() {
        stores.storeAllPending(epoch); // window parts refuse lazy stores: nothing pending there
    }

    /** Lazy stores: chunks completed and still on the device, not stored yet (0 when stores are eager). */
    public int pendingStoreChunks() {
        return stores.pendingChunks();
    }

    /** The request's store cursor: leading blocks stored, being stored or known present. */
    public int storedBlocks(long requestId) {
        return stores.cursor(requestId);
    }

    /**
     * Checks job and tier invariants (the registry's, the tier index's); throws
     * IllegalStateException naming the broken one.
     */
    public void checkInvariants() {
        for (OffloadScheduler p : windowParts()) {
            p.checkInvariants();
        }
        jobs.checkInvariants(pool);
        host.index().checkInvariants();
        behind.checkInvariants();
    }

    /**
     * Closes the transfer engine (no transfer thread touches device or tier memory afterwards),
     * then the host tier. The device pool is the engine's, closed after this. With a disk tier
     * written on eviction, the host tier's chunks are first written to disk ({@link #flushToDisk}).
     */
    @Override
    public void close() {
        try {
            submitStores();
            flushToDisk();
        } finally {
            try {
                closeTiers();
            } finally {
                for (OffloadScheduler p : windowParts()) {
                    p.close();
                }
            }
        }
    }

    /**
     * With a disk tier written on host eviction ({@code --disk-write-policy on-evict}): waits for
     * the jobs in flight, then writes every host chunk absent from disk (hottest first, as many as
     * the disk budget holds) and waits for those writes, each wait bounded by the job deadline.
     * A no-op for write-through (the disk already has them) or without a disk tier. Called by
     * {@link #close} at a clean shutdown; idempotent.
     */
    public void flushToDisk() {
        for (OffloadScheduler p : windowParts()) {
            p.flushToDisk();
        }
        behind.flushHost(epoch, this::awaitAll);
    }

    private void awaitAll() {
        long end = transfers.nanoTime() + config.jobDeadline().toNanos();
        while (busy() && transfers.nanoTime() - end < 0) {
            awaitAny(config.jobDeadline());
        }
    }

    private void closeTiers() {
        transfers.close();
        behind.close();
        host.close();
    }

    /**
     * Waits for the disk tier's restart scan to end and adopts what it found (the engine works
     * without this: chunks not scanned yet are misses; tests and benchmarks want determinism).
     */
    public void awaitDiskScan(Duration timeout) {
        for (OffloadScheduler p : windowParts()) {
            p.awaitDiskScan(timeout);
        }
        behind.awaitScan(timeout, epoch);
    }

    /** Progress of the disk tier's restart scan, or null without a disk tier. */
    public io.kvtier.tier.disk.DiskIndexScan.Progress diskScanProgress() {
        return behind.scanProgress();
    }

    /**
     * Why the disk tier only reads its directory (another process owns it, or the lock file
     * cannot be written), as one line for the user; null if it writes, or without a disk tier.
     */
    public String diskReadOnlyReason() {
        return behind.readOnlyReason();
    }

    /** The remote tier's counters, or null without a remote tier. */
    public RemoteStats remoteStats() {
        return behind.remoteStats();
    }

    /** The disk tier's bookkeeping, or null without a disk tier. */
    public TierIndex diskIndex() {
        return behind.diskIndex();
    }

    /** Jobs holding resources (live and orphaned). */
    public int jobsInFlight() {
        stores.submitStep(epoch);
        return jobs.liveCount() + jobs.orphanCount();
    }
}

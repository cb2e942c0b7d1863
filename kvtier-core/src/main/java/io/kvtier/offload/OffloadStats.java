package io.kvtier.offload;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Counters of the offload scheduler. Tokens are token positions; bytes are payload bytes
 * (headers excluded). Per-tier maps are keyed by tier name ({@code host}, ...).
 */
public final class OffloadStats {

    final Map<String, Long> externalHitTokens = new TreeMap<>();
    /** Blocks stored and loaded per tier: added to at every completion, so kept in fixed slots, not maps. */
    final TierCounts blocksStored = new TierCounts(1);
    final TierCounts blocksLoaded = new TierCounts(1);
    final Map<String, Long> blocksNotStored = new TreeMap<>();
    long bytesStored;
    long bytesLoaded;
    long loadFailures;
    long storeFailures;
    long storeRefusals;
    long windowBlocksSkipped;
    long jobsTimedOut;
    long staleCompletions;
    /** Engine-thread time of commits with chunks to store ({@link #storeDecisionNanos()}), ns. */
    long storeDecisionNanos;
    /** Engine-thread time applying completed jobs ({@link #completionNanos()}), ns. */
    long completionNanos;
    long loadDecisions;
    long hitsRecomputed;
    long hitsCut;
    long tokensRecomputedByChoice;
    long hitsWaited;
    long recomputedWhenShort;
    Map<String, Double> loadBandwidth = Map.of();
    double prefillTokensPerSecond = Double.NaN;
    /** Store and load jobs per tier: their count, bytes and ns ({@link Transfers}). */
    final TierCounts stores = new TierCounts(3);
    final TierCounts loads = new TierCounts(3);

    /**
     * Totals of the transfer jobs of one direction and tier, successful or not.
     *
     * @param jobs  jobs that ended
     * @param bytes payload bytes they copied (a failed job counts the chunks it completed)
     * @param nanos time they took, as {@link io.kvtier.offload.transfer.TransferResult#nanos()} says
     */
    public record Transfers(long jobs, long bytes, long nanos) {
        /** From a tier's {@link TierCounts} slots: jobs, bytes, ns. */
        static Transfers of(long[] v, int at) {
            return new Transfers(v[at], v[at + 1], v[at + 2]);
        }
    }

    /** Reason: the chunk's index in its chain is at least the host tier's capacity in chunks. */
    public static final String LONGER_THAN_HOST = "longer-than-host-tier";
    /** Reason: the chunk (or one before it in its chain) was not admitted to the host tier yet. */
    public static final String NOT_ADMITTED = "not-admitted";
    /** Reason: a disk hit's chunk beyond what the host tier could take beside the rest of the hit. */
    public static final String NOT_PROMOTED = "disk-hit-beyond-host-tier";
    /** Reason: a remote hit's chunk beyond what the host tier could take beside the rest of the hit. */
    public static final String REMOTE_NOT_PROMOTED = "remote-hit-beyond-host-tier";

    /**
     * Reason: a host chunk's write to the disk tier failed (disk full, I/O error) or was skipped
     * while disk writes were paused after a failure.
     */
    public static final String DISK_WRITE_FAILED = "disk-write-failed";

    /** Reason: the disk tier only reads its directory (another process owns it), so no host chunk is written there. */
    public static final String DISK_READ_ONLY = "disk-read-only";

    /**
     * Reason: writing the chunk to the disk tier would have evicted a chunk before it in its chain
     * (its parent, or further up) from the disk; a lookup starts at the chain's head, so the disk
     * keeps the prefix and skips the chunk.
     */
    public static final String DISK_PREFIX_KEPT = "disk-prefix-kept";

    /** Reason (lazy stores): a block of the chunk left the device prefix cache before its store ran. */
    public static final String EVICTED_BEFORE_STORE = "evicted-before-store";
    /** Reason (lazy stores): the chunk reached the horizon, but a chunk before it was evicted unstored. */
    public static final String PARENT_NOT_STORED = "parent-not-stored";

    /** Every reason {@link #blocksNotStored()} counts under, in the order records list them. */
    public static final List<String> NOT_STORED_REASONS = List.of(LONGER_THAN_HOST, NOT_ADMITTED, NOT_PROMOTED,
            REMOTE_NOT_PROMOTED, DISK_WRITE_FAILED, DISK_READ_ONLY, DISK_PREFIX_KEPT, EVICTED_BEFORE_STORE, PARENT_NOT_STORED);

    /**
     * {@code counts} with every one of {@code keys} first, in their order (0 where absent), then
     * any other key it has: a record's fields (a CSV's columns) then depend on the run's
     * configuration, not on what happened in it. A new map.
     */
    public static Map<String, Long> everyKey(List<String> keys, Map<String, Long> counts) {
        Map<String, Long> m = new LinkedHashMap<>();
        keys.forEach(k -> m.put(k, counts.getOrDefault(k, 0L)));
        counts.forEach(m::putIfAbsent);
        return m;
    }

    /**
     * The counters of every KV group's scheduler added up ({@code groups} in group order, group 0
     * first), for a model with several groups: blocks, bytes, transfers, failures and skips are
     * sums over the groups (a block of each group counts once: block counts add blocks of
     * different sizes, the bytes are exact). A hit is the request's and is counted once: the hit
     * tokens and the load decisions are group 0's (it bounds every hit and decides it). A new
     * object, not updated afterwards.
     */
    public static OffloadStats sum(java.util.List<OffloadStats> groups) {
        OffloadStats t = new OffloadStats();
        OffloadStats first = groups.getFirst();
        t.externalHitTokens.putAll(first.externalHitTokens);
        t.loadDecisions = first.loadDecisions;
        t.hitsRecomputed = first.hitsRecomputed;
        t.hitsCut = first.hitsCut;
        t.tokensRecomputedByChoice = first.tokensRecomputedByChoice;
        t.hitsWaited = first.hitsWaited;
        t.recomputedWhenShort = first.recomputedWhenShort;
        t.loadBandwidth = first.loadBandwidth;
        t.prefillTokensPerSecond = first.prefillTokensPerSecond;
        for (OffloadStats g : groups) {
            t.blocksStored.addAll(g.blocksStored);
            t.blocksLoaded.addAll(g.blocksLoaded);
            g.blocksNotStored.forEach((k, n) -> add(t.blocksNotStored, k, n));
            t.stores.addAll(g.stores);
            t.loads.addAll(g.loads);
            t.bytesStored += g.bytesStored;
            t.bytesLoaded += g.bytesLoaded;
            t.loadFailures += g.loadFailures;
            t.storeFailures += g.storeFailures;
            t.storeRefusals += g.storeRefusals;
            t.windowBlocksSkipped += g.windowBlocksSkipped;
            t.jobsTimedOut += g.jobsTimedOut;
            t.staleCompletions += g.staleCompletions;
            t.storeDecisionNanos += g.storeDecisionNanos;
            t.completionNanos += g.completionNanos;
        }
        return t;
    }

    /**
     * Adds {@code n} (negative: a hit taken back) to the tier's count. A count back at 0 is
     * removed, so a hit lost whole reads {@code {}} like no hit, not {@code {remote=0}}.
     */
    static void add(Map<String, Long> m, String tier, long n) {
        m.merge(tier, n, (a, b) -> a + b == 0 ? null : a + b);
    }

    /**
     * Store jobs per destination tier: {@code host} copies device blocks to host slots, {@code disk}
     * writes host slots to files.
     */
    public Map<String, Transfers> stores() {
        return stores.toMap(Transfers::of);
    }

    /**
     * Load jobs per source tier: {@code host} copies host slots into device blocks, {@code disk}
     * reads files into host slots (a promotion).
     */
    public Map<String, Transfers> loads() {
        return loads.toMap(Transfers::of);
    }

    void notStored(String reason, long blocks) {
        if (blocks > 0) {
            add(blocksNotStored, reason, blocks);
        }
    }

    /** Prompt tokens whose KV was loaded from each tier instead of computed. */
    public Map<String, Long> externalHitTokens() {
        return Collections.unmodifiableSortedMap(new TreeMap<>(externalHitTokens));
    }

    public long externalHitTokensTotal() {
        return externalHitTokens.values().stream().mapToLong(Long::longValue).sum();
    }

    /** Device blocks written to each tier by completed stores. */
    public Map<String, Long> blocksStored() {
        return blocksStored.toMap();
    }

    /** Device blocks filled from each tier by completed loads. */
    public Map<String, Long> blocksLoaded() {
        return blocksLoaded.toMap();
    }

    /**
     * Device blocks that could have been stored in (or promoted to) the host tier, or written on
     * to the disk tier ({@value #DISK_WRITE_FAILED}), but were not, by reason: {@value #LONGER_THAN_HOST} (the chain is longer than the host tier: its prefix
     * that fits is stored, the rest never), {@value #NOT_ADMITTED} (admission threshold not
     * reached), {@value #DISK_WRITE_FAILED} (blocks of host chunks that did not reach the disk tier:
     * their write failed or came while disk writes were paused), {@value #EVICTED_BEFORE_STORE} / {@value #PARENT_NOT_STORED} (lazy stores: the chunk
     * or one before it left the device before it reached the store horizon), {@value #NOT_PROMOTED} / {@value #REMOTE_NOT_PROMOTED} (a disk / remote hit's tail that
     * did not fit beside its head; those blocks were recomputed). Each block is counted once per request.
     */
    public Map<String, Long> blocksNotStored() {
        return Collections.unmodifiableSortedMap(new TreeMap<>(blocksNotStored));
    }

    public long bytesStored() {
        return bytesStored;
    }

    public long bytesLoaded() {
        return bytesLoaded;
    }

    /**
     * Blocks of a sliding-window group that left the window before they were written in full, so
     * were never stored (on purpose: no later request reads them; docs/kv-groups.md). 0 for a full group.
     */
    public long windowBlocksSkipped() {
        return windowBlocksSkipped;
    }

    /** Loads that failed (bad checksum, header mismatch, transfer error or deadline), for any chunk. */
    public long loadFailures() {
        return loadFailures;
    }

    /** Stores that failed after being accepted. */
    public long storeFailures() {
        return storeFailures;
    }

    /** Stores a tier refused for now because every slot it could use is pinned or being stored (retried at the request's next commit). */
    public long storeRefusals() {
        return storeRefusals;
    }

    /** Jobs failed by their deadline. */
    public long jobsTimedOut() {
        return jobsTimedOut;
    }

    /** Completions of jobs from before a cache reset, or after their deadline: resources freed, results ignored. */
    public long staleCompletions() {
        return staleCompletions;
    }

    /**
     * Wall time on the engine thread, ns, of the commits that had new full chunks to store (eager
     * stores): choosing the chunks, reserving their host slots (evicting as the policy says) and
     * adding them to the step's store job. With {@link #stores()}'s copy time and
     * {@link #completionNanos()}, what each stored chunk cost the engine thread (bench offload
     * prints it per chunk).
     */
    public long storeDecisionNanos() {
        return storeDecisionNanos;
    }

    /**
     * Wall time on the engine thread, ns, spent applying completed jobs of every kind: the tier's
     * bookkeeping, the counters, the release of the device blocks a job held.
     */
    public long completionNanos() {
        return completionNanos;
    }

    /**
     * Load or recompute ({@code --load-policy faster}, {@link LoadCosts}): the hits decided, and
     * the inputs of the latest decision.
     *
     * @param decided             hits beyond the device that were decided (a request decided again
     *                            while it waits to be admitted is counted once)
     * @param recomputed          hits recomputed whole (no chunk loaded): loading was slower
     * @param cut                 hits whose head was loaded and tail recomputed
     * @param tokensRecomputed    hit tokens recomputed by choice, tokens (those recomputed after a wait included)
     * @param waited              hits whose load waited for device blocks that stores pinned, the
     *                            requests behind passing it (each request counted once)
     * @param recomputedWhenShort hits whose load was chosen but whose device blocks were short at
     *                            admission, recomputed instead (waiting for the blocks was dearer,
     *                            or the wait's bound ran out)
     * @param bandwidth           measured load bandwidth per tier, bytes/s
     * @param prefillTokensPerSecond measured prefill speed, tokens/s (NaN before the first measure)
     */
    public record LoadDecisions(long decided, long recomputed, long cut, long tokensRecomputed, long waited,
                                long recomputedWhenShort, Map<String, Double> bandwidth, double prefillTokensPerSecond) {
    }

    public LoadDecisions loadDecisions() {
        return new LoadDecisions(loadDecisions, hitsRecomputed, hitsCut, tokensRecomputedByChoice, hitsWaited, recomputedWhenShort,
                loadBandwidth,
                prefillTokensPerSecond);
    }
}

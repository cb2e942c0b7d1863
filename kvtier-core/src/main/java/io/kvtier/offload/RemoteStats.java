package io.kvtier.offload;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Counters of the remote tier (the per-tier hits, blocks and bytes are in {@link OffloadStats}
 * under {@code remote}). Engine thread only.
 */
public final class RemoteStats {

    /** Reasons a store was dropped: the bytes-in-flight budget was reached. */
    public static final String BUDGET = "budget";
    /** Reasons a store was dropped: the tier is off, or the key's node's breaker is open. */
    public static final String UNAVAILABLE = "unavailable";
    /** Reasons a store was dropped: the store's write latency stays above half the timeout. */
    public static final String SLOW = "slow";

    /** Every reason a store is dropped for ({@link #storesDroppedBy()}'s keys). */
    public static final List<String> DROP_REASONS = List.of(BUDGET, UNAVAILABLE, SLOW);
    /** Every cause a failed load is counted under ({@link #loadFailures()}'s keys). */
    public static final List<String> LOAD_FAILURE_CAUSES = List.of("miss", "timeout", "verify", UNAVAILABLE, "error");
    /** Every cause a probe job that got no answer is counted under ({@link #probeFailures()}'s keys); an absent chunk is an answer. */
    public static final List<String> PROBE_FAILURE_CAUSES = List.of("timeout", UNAVAILABLE, "error");
    /** Every cause a failed write is counted under ({@link #storeFailures()}'s keys). */
    public static final List<String> STORE_FAILURE_CAUSES = List.of("timeout", "oversize", UNAVAILABLE, "error");
    /** Breaker states in which no key of a group is served (a sum of groups all in these serves none either). */
    private static final java.util.Set<String> NOT_SERVING = java.util.Set.of("open", "half_open");

    final Map<String, Long> loadFailures = new TreeMap<>();
    final Map<String, Long> storesDroppedBy = new TreeMap<>();
    long bytesInFlight;
    long writeLatencyNanos = -1;
    final Map<String, Long> storeFailures = new TreeMap<>();
    long probes;
    final Map<String, Long> probeFailures = new TreeMap<>();
    long chunksProbedPresent;
    long chunksStored;
    long chunksLoaded;
    long writes;
    String breakerState = "closed";
    long breakerOpens;
    String offReason;

    /** Chunks whose promotion failed, by cause: {@code miss}, {@code timeout}, {@code verify}, {@code unavailable}, {@code error}. */
    public Map<String, Long> loadFailures() {
        return Collections.unmodifiableSortedMap(new TreeMap<>(loadFailures));
    }

    /**
     * Chunks not written because their write job failed, by cause: {@code timeout},
     * {@code oversize}, {@code unavailable}, {@code error} (a job that fails at its i-th chunk
     * counts that chunk and every later one).
     */
    public Map<String, Long> storeFailures() {
        return Collections.unmodifiableSortedMap(new TreeMap<>(storeFailures));
    }

    /** Probe jobs sent (each a pipeline of TOUCH commands). */
    public long probes() {
        return probes;
    }

    /**
     * Probe jobs that got no answer for some chunk, by cause: {@code timeout}, {@code unavailable},
     * {@code error} (a probe that finds a chunk absent got its answer and is not counted): the chunks
     * after the first unanswered one were not asked, so {@link #chunksProbedPresent()} says nothing of them.
     */
    public Map<String, Long> probeFailures() {
        return Collections.unmodifiableSortedMap(new TreeMap<>(probeFailures));
    }

    /** Chunks a probe found in the store. */
    public long chunksProbedPresent() {
        return chunksProbedPresent;
    }

    /** Chunks written to the store. */
    public long chunksStored() {
        return chunksStored;
    }

    /** Chunks read and verified from the store into host slots. */
    public long chunksLoaded() {
        return chunksLoaded;
    }

    /**
     * Write jobs that sent SETs to the store, counted when they end; a job that sent none (every
     * value above the store's limit: {@code store_failures} {@code oversize}) is not counted.
     */
    public long writes() {
        return writes;
    }

    /** Chunks not written (never waited for), all reasons. */
    public long storesDropped() {
        return storesDroppedBy.values().stream().mapToLong(Long::longValue).sum();
    }

    /**
     * Chunks not written, by reason: {@value #BUDGET} (bytes in flight at the budget),
     * {@value #UNAVAILABLE} (tier off, breaker open), {@value #SLOW} (write latency high).
     */
    public Map<String, Long> storesDroppedBy() {
        return Collections.unmodifiableSortedMap(new TreeMap<>(storesDroppedBy));
    }

    /** Bytes of values being written now (header and payload). */
    public long bytesInFlight() {
        return bytesInFlight;
    }

    /** Average latency of the last write jobs (the transfer thread's start of the job to its last answer: time queued behind other jobs is not counted), in nanoseconds; -1 before the first. */
    public long writeLatencyNanos() {
        return writeLatencyNanos;
    }

    void dropped(String reason, long chunks) {
        if (chunks > 0) {
            add(storesDroppedBy, reason, chunks);
        }
    }

    /** {@code closed}, {@code partial}, {@code open} or {@code off}, at the last poll. */
    public String breakerState() {
        return breakerState;
    }

    /** Times the tier went from serving to refusing, at the last poll ({@link io.kvtier.tier.remote.RemoteStore#breakerOpens}). */
    public long breakerOpens() {
        return breakerOpens;
    }

    /** Why the tier turned itself off (one line, no secret), at the last poll; null while it is on. */
    public String offReason() {
        return offReason;
    }

    /** A copy that the engine thread no longer changes (for another thread: a metrics scrape). */
    public RemoteStats copy() {
        RemoteStats c = new RemoteStats();
        c.loadFailures.putAll(loadFailures);
        c.storeFailures.putAll(storeFailures);
        c.storesDroppedBy.putAll(storesDroppedBy);
        c.probes = probes;
        c.probeFailures.putAll(probeFailures);
        c.chunksProbedPresent = chunksProbedPresent;
        c.chunksStored = chunksStored;
        c.chunksLoaded = chunksLoaded;
        c.writes = writes;
        c.breakerState = breakerState;
        c.breakerOpens = breakerOpens;
        c.offReason = offReason;
        c.bytesInFlight = bytesInFlight;
        c.writeLatencyNanos = writeLatencyNanos;
        return c;
    }

    /**
     * The remote counters of every KV group's scheduler added up (each group has its own keys, all
     * share one store): counts and bytes are sums; the breaker openings are the store's, counted
     * once (the largest group's figure: a group reads it from the shared store); the breaker state
     * is the groups' common state, or
     * when they differ {@code half_open} if none serves (some open, some half-open), else
     * {@code partial} (some keys answer, others do not); the off reason is the
     * first group's that has one; the write latency is the highest group's. A new object, not updated afterwards.
     */
    public static RemoteStats sum(List<RemoteStats> groups) {
        RemoteStats t = new RemoteStats();
        t.breakerState = groups.getFirst().breakerState;
        for (RemoteStats g : groups) {
            g.loadFailures.forEach((k, n) -> add(t.loadFailures, k, n));
            g.storeFailures.forEach((k, n) -> add(t.storeFailures, k, n));
            g.storesDroppedBy.forEach((k, n) -> add(t.storesDroppedBy, k, n));
            t.probes += g.probes;
            g.probeFailures.forEach((k, n) -> add(t.probeFailures, k, n));
            t.chunksProbedPresent += g.chunksProbedPresent;
            t.chunksStored += g.chunksStored;
            t.chunksLoaded += g.chunksLoaded;
            t.writes += g.writes;
            t.breakerOpens = Math.max(t.breakerOpens, g.breakerOpens);
            t.offReason = t.offReason != null ? t.offReason : g.offReason;
            t.bytesInFlight += g.bytesInFlight;
            t.writeLatencyNanos = Math.max(t.writeLatencyNanos, g.writeLatencyNanos);
            if (!t.breakerState.equals(g.breakerState)) {
                t.breakerState = NOT_SERVING.contains(t.breakerState) && NOT_SERVING.contains(g.breakerState) ? "half_open" : "partial";
            }
        }
        return t;
    }

    static void add(Map<String, Long> m, String key, long n) {
        m.merge(key, n, Long::sum);
    }
}

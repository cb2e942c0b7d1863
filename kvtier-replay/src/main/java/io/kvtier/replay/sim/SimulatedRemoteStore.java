package io.kvtier.replay.sim;

import io.kvtier.kv.BlockKey;
import java.util.LinkedHashMap;
import java.util.List;

/**
 * The replay's remote store (Redis / Valkey) with its cost: which chunk keys it holds, evicting
 * the least recently used one beyond {@code capacityChunks} (Redis' {@code allkeys-lru}
 * approximates this; a probe or a read refreshes recency as {@code TOUCH} and {@code GET} do),
 * and the time of one job: {@code latency + bytes / bandwidth}. Every number and its source:
 * {@code docs/replay-cost-model.md}. Engine thread only.
 *
 * @param capacityChunks most keys held ({@link Long#MAX_VALUE}: unbounded)
 * @param latencyNanos   fixed cost of one pipelined job (network round trip and command handling), ns
 * @param bytesPerSecond throughput of one job's values, bytes/s
 */
public final class SimulatedRemoteStore {

    /** Default latency of one job, ns: a datacenter round trip plus Redis' command handling. */
    public static final double DEFAULT_LATENCY_NANOS = 200_000;
    /** Default throughput, bytes/s: a 25 GbE link (3.125 GB/s raw) at 80%. */
    public static final double DEFAULT_BYTES_PER_SECOND = 2.5e9;

    private final long capacityChunks;
    private final double latencyNanos;
    private final double bytesPerSecond;
    private final LinkedHashMap<BlockKey, Boolean> keys = new LinkedHashMap<>(1024, 0.75f, true);
    private long evictions;

    public SimulatedRemoteStore(long capacityChunks, double latencyNanos, double bytesPerSecond) {
        if (capacityChunks < 1) {
            throw new IllegalArgumentException("remote capacity must be at least 1 chunk, got " + capacityChunks);
        }
        if (!(latencyNanos >= 0) || Double.isInfinite(latencyNanos)) {
            throw new IllegalArgumentException("remote latency must be finite and >= 0, got " + latencyNanos + " ns");
        }
        if (!(bytesPerSecond > 0) || Double.isInfinite(bytesPerSecond)) {
            throw new IllegalArgumentException("remote bandwidth must be finite and > 0, got " + bytesPerSecond + " B/s");
        }
        this.capacityChunks = capacityChunks;
        this.latencyNanos = latencyNanos;
        this.bytesPerSecond = bytesPerSecond;
    }

    /** Time of one job moving {@code bytes} bytes, ns. */
    public long jobNanos(long bytes) {
        return Math.round(latencyNanos + bytes / bytesPerSecond * 1e9);
    }

    /** How many leading keys the store holds (refreshing their recency). */
    int leadingPresent(List<BlockKey> chain) {
        int n = 0;
        for (BlockKey k : chain) {
            if (keys.get(k) == null) {
                break;
            }
            n++;
        }
        return n;
    }

    /** A write completed: the keys become visible, the least recently used beyond the capacity go. */
    void written(List<BlockKey> written) {
        for (BlockKey k : written) {
            keys.put(k, Boolean.TRUE);
        }
        while (keys.size() > capacityChunks) {
            var eldest = keys.entrySet().iterator();
            eldest.next();
            eldest.remove();
            evictions++;
        }
    }

    /** Keys held now. */
    public int size() {
        return keys.size();
    }

    /** Keys evicted for capacity so far. */
    public long evictions() {
        return evictions;
    }

    public long capacityChunks() {
        return capacityChunks;
    }

    /** The figures in one line, with units. */
    public String describe() {
        return String.format(java.util.Locale.ROOT, "remote %s, %.1f us/job + %.2f GB/s",
                capacityChunks == Long.MAX_VALUE ? "unbounded chunks" : io.kvtier.text.Plural.grouped(capacityChunks, "chunk"),
                latencyNanos / 1e3, bytesPerSecond / 1e9);
    }

    @Override
    public String toString() {
        return describe();
    }
}

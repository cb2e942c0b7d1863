package io.kvtier.offload;

import java.util.Map;
import java.util.TreeMap;

/**
 * Counters of the remote tier (the per-tier hits, blocks and bytes are in {@link OffloadStats}
 * under {@code remote}). Engine thread only.
 */
public final class RemoteStats {

    final Map<String, Long> loadFailures = new TreeMap<>();
    final Map<String, Long> storeFailures = new TreeMap<>();
    long probes;
    long chunksProbedPresent;
    long chunksStored;
    long chunksLoaded;
    long storesDropped;
    long writes;
    String breakerState = "closed";
    long breakerOpens;

    /** Chunks whose promotion failed, by cause: {@code miss}, {@code timeout}, {@code verify}, {@code unavailable}, {@code error}. */
    public Map<String, Long> loadFailures() {
        return Map.copyOf(loadFailures);
    }

    /** Write jobs that failed, by cause: {@code timeout}, {@code oversize}, {@code unavailable}, {@code error}. */
    public Map<String, Long> storeFailures() {
        return Map.copyOf(storeFailures);
    }

    /** Probe jobs sent (each a pipeline of TOUCH commands). */
    public long probes() {
        return probes;
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

    /** Write jobs sent to the store. */
    public long writes() {
        return writes;
    }

    /** Chunks not written: the bytes-in-flight budget was reached, or the store was unavailable. */
    public long storesDropped() {
        return storesDropped;
    }

    /** {@code closed}, {@code partial}, {@code open} or {@code off}, at the last poll. */
    public String breakerState() {
        return breakerState;
    }

    /** Times a node's breaker opened. */
    public long breakerOpens() {
        return breakerOpens;
    }

    static void add(Map<String, Long> m, String key, long n) {
        m.merge(key, n, Long::sum);
    }
}

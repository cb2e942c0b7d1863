package io.kvtier.offload;

import java.util.Map;
import java.util.TreeMap;

/**
 * Counters of the offload scheduler. Tokens are token positions; bytes are payload bytes
 * (headers excluded). Per-tier maps are keyed by tier name ({@code host}, ...).
 */
public final class OffloadStats {

    final Map<String, Long> externalHitTokens = new TreeMap<>();
    final Map<String, Long> blocksStored = new TreeMap<>();
    final Map<String, Long> blocksLoaded = new TreeMap<>();
    long bytesStored;
    long bytesLoaded;
    long loadFailures;
    long storeFailures;
    long storeRefusals;
    long jobsTimedOut;
    long staleCompletions;

    static void add(Map<String, Long> m, String tier, long n) {
        m.merge(tier, n, Long::sum);
    }

    /** Prompt tokens whose KV was loaded from each tier instead of computed. */
    public Map<String, Long> externalHitTokens() {
        return Map.copyOf(externalHitTokens);
    }

    public long externalHitTokensTotal() {
        return externalHitTokens.values().stream().mapToLong(Long::longValue).sum();
    }

    /** Device blocks written to each tier by completed stores. */
    public Map<String, Long> blocksStored() {
        return Map.copyOf(blocksStored);
    }

    /** Device blocks filled from each tier by completed loads. */
    public Map<String, Long> blocksLoaded() {
        return Map.copyOf(blocksLoaded);
    }

    public long bytesStored() {
        return bytesStored;
    }

    public long bytesLoaded() {
        return bytesLoaded;
    }

    /** Loads that failed (bad checksum, header mismatch, transfer error or deadline), for any chunk. */
    public long loadFailures() {
        return loadFailures;
    }

    /** Stores that failed after being accepted. */
    public long storeFailures() {
        return storeFailures;
    }

    /** Stores a tier refused for lack of space (retried later). */
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
}

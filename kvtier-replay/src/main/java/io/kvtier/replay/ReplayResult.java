package io.kvtier.replay;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What one replay measured. Tokens are token positions; bytes are the simulated model's KV bytes
 * (blocks x block size x the cost model's bytes per token), not the replay's own memory.
 *
 * @param trace              trace name
 * @param config             the settings
 * @param deviceBlocks       device pool used, blocks
 * @param hostChunks         host tier used, chunks of one block (0 = no offloading)
 * @param requests           requests replayed
 * @param promptTokens       prompt tokens over all requests
 * @param outputTokens       tokens generated
 * @param deviceHitTokens    prompt tokens found in the device prefix cache
 * @param hostHitTokens      prompt tokens loaded from the host tier
 * @param hostChunksWritten  chunks stored into the host tier (completed stores)
 * @param deviceChunksLoaded chunks loaded from the host tier into the device
 * @param hostEvictions      host entries evicted to make room
 * @param storeRefusals      stores the host tier refused for space
 * @param preemptions        requests preempted (timed mode)
 * @param bytesStored        bytes moved device to host
 * @param bytesLoaded        bytes moved host to device
 * @param hitTokensByRequest hit tokens of each request, in trace order
 * @param optimum            the offline references (instant mode at block size 512), or null
 * @param timing             latencies and throughput (timed mode), or null
 * @param wallSeconds        real time the replay took
 * @param diskChunks         disk tier used, chunks of one block (0 = none)
 * @param diskHitTokens      prompt tokens promoted from the disk tier and loaded
 * @param diskChunksWritten  chunks written into the disk tier
 * @param traceRequests      requests in the whole trace file ({@code requests} were replayed: the first ones)
 * @param remote             the remote tier's figures, or null without one
 * @param blocksNotStored    blocks not stored in the host tier (disk-write-failed: in the disk tier), by reason ({@link io.kvtier.offload.OffloadStats#blocksNotStored()})
 * @param loadDecisions      load-or-recompute decisions and their inputs, or null without offloading
 * @param kvTraffic          per KV group traffic and TTFT with {@code --kv-groups}, or null without
 */
public record ReplayResult(String trace, ReplayConfig config, int deviceBlocks, int hostChunks, int requests,
                           long promptTokens, long outputTokens, long deviceHitTokens, long hostHitTokens,
                           long hostChunksWritten, long deviceChunksLoaded, long hostEvictions, long storeRefusals,
                           long preemptions, long bytesStored, long bytesLoaded, int[] hitTokensByRequest,
                           Optimum optimum, Timing timing, double wallSeconds, int diskChunks, long diskHitTokens,
                           long diskChunksWritten, int traceRequests, Remote remote, java.util.Map<String, Long> blocksNotStored,
                           io.kvtier.offload.OffloadStats.LoadDecisions loadDecisions, KvTraffic kvTraffic) {

    /**
     * What each KV group moved between the device and the host tier ({@code --kv-groups}).
     *
     * @param layout the simulated model's groups
     * @param groups each group's traffic, in group order
     * @param ttft   time to first token: timed mode's; in instant mode each request's alone (the load
     *               it waits for, then its prefill), on the cost model's clock
     */
    public record KvTraffic(KvGroupLayout layout, java.util.List<GroupTraffic> groups, Percentiles ttft) {
        public KvTraffic {
            groups = java.util.List.copyOf(groups);
        }

        /** Bytes stored into the host tier over every group. */
        public long bytesStored() {
            return groups.stream().mapToLong(GroupTraffic::bytesStored).sum();
        }

        /** Bytes loaded from the host tier over every group. */
        public long bytesLoaded() {
            return groups.stream().mapToLong(GroupTraffic::bytesLoaded).sum();
        }
    }

    /**
     * One KV group's traffic.
     *
     * @param index               the group's index (0 = full attention)
     * @param window              0 for full attention, else the sliding window, positions
     * @param layers              layers in the group
     * @param bytesPerBlock       bytes of one block of the group: block tokens x layers x bytes per token per layer
     * @param blocksStored        blocks stored into the host tier
     * @param blocksLoaded        blocks loaded from the host tier
     * @param windowBlocksSkipped blocks never stored because they left the window in the step that filled them
     */
    public record GroupTraffic(int index, int window, int layers, long bytesPerBlock, long blocksStored, long blocksLoaded,
                               long windowBlocksSkipped) {
        public long bytesStored() {
            return Math.multiplyExact(blocksStored, bytesPerBlock);
        }

        public long bytesLoaded() {
            return Math.multiplyExact(blocksLoaded, bytesPerBlock);
        }
    }

    /**
     * The simulated remote tier's figures.
     *
     * @param capacityChunks keys the store holds at most ({@link Long#MAX_VALUE}: unbounded)
     * @param hitTokens      prompt tokens promoted from the store and loaded
     * @param chunksWritten  chunks written into the store (completed writes)
     * @param jobs           remote jobs sent (probes, reads, writes)
     * @param evictions      keys the store evicted for capacity
     */
    public record Remote(long capacityChunks, long hitTokens, long chunksWritten, long jobs, long evictions) {
    }

    /**
     * The offline references at the same capacity, over the trace's 512-token blocks under the
     * engine's hit rule (a hit never covers a prompt's last token).
     *
     * @param capacityChunks   chunks given to Belady: device blocks + host chunks + disk chunks
     *                         (+ remote chunks), the most distinct blocks the engine's tiers can hold together
     * @param beladyHitTokens  hit tokens of the Belady optimum at that capacity
     * @param ceilingHitTokens hit tokens of an unbounded cache
     * @param remoteCappedAt   the trace's distinct chunks when the remote tier holds more (its part of
     *                         {@code capacityChunks} is cut to them: more would change nothing), else -1
     */
    public record Optimum(long capacityChunks, long beladyHitTokens, long ceilingHitTokens, long remoteCappedAt) {
    }

    /** p50, p90, p99, mean and max of a latency, seconds. */
    public record Percentiles(double p50, double p90, double p99, double mean, double max) {
    }

    /**
     * Timed mode's figures, on the virtual clock.
     *
     * @param makespanSeconds  first arrival to last completion
     * @param steps            engine steps
     * @param ttft             time to first token
     * @param e2e              arrival to last token
     * @param queue            arrival to the request's first forward pass (a load it waited for included)
     * @param maxWaiting       most requests waiting for admission at once
     * @param meanWaiting      requests waiting, averaged over steps
     * @param gpuBusy          fraction of the makespan spent in forward passes
     * @param storeLaneBusy    fraction of the makespan the device-to-host lane was busy
     * @param loadLaneBusy     fraction of the makespan the host-to-device lane was busy
     * @param ttftNanos        time to first token of each request in trace order, ns (shared; do not modify)
     * @param e2eNanos         arrival to last token of each request in trace order, ns (shared; do not modify)
     */
    public record Timing(double makespanSeconds, long steps, Percentiles ttft, Percentiles e2e, Percentiles queue,
                         int maxWaiting, double meanWaiting, double gpuBusy, double storeLaneBusy,
                         double loadLaneBusy, long[] ttftNanos, long[] e2eNanos) {
    }

    public ReplayResult {
        hitTokensByRequest = hitTokensByRequest.clone();
    }

    /** Whether only the first requests of the trace were replayed. */
    public boolean partial() {
        return requests < traceRequests;
    }

    /** The trace's name, with "(first N of M requests)" when only part of it was replayed. */
    public String traceLabel() {
        return partial() ? String.format(java.util.Locale.ROOT, "%s (first %,d of %,d requests)", trace, requests, traceRequests)
                : trace;
    }

    /** A copy of the per-request hit tokens. */
    @Override
    public int[] hitTokensByRequest() {
        return hitTokensByRequest.clone();
    }

    /** Hit tokens of request {@code i} (trace order). */
    public int hitTokens(int i) {
        return hitTokensByRequest[i];
    }

    /** Prompt tokens not computed: device, host and disk hits. */
    public long hitTokens() {
        return deviceHitTokens + hostHitTokens + diskHitTokens + remoteHitTokens();
    }

    /** Prompt tokens promoted from the remote tier and loaded (0 without one). */
    public long remoteHitTokens() {
        return remote == null ? 0 : remote.hitTokens();
    }

    /**
     * Chunks written into the remote tier per chunk hit in it (NaN without remote hits): what each
     * remote hit cost in writes.
     */
    public double remoteWritesPerHit() {
        long hitChunks = remote == null ? 0 : remote.hitTokens() / config.blockSize();
        return hitChunks == 0 ? Double.NaN : (double) remote.chunksWritten() / hitChunks;
    }

    /** Hit tokens / prompt tokens. */
    public double tokenHitRatio() {
        return ratio(hitTokens());
    }

    /** Hit tokens per tier, device first. */
    public Map<String, Long> hitTokensByTier() {
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("device", deviceHitTokens);
        m.put("host", hostHitTokens);
        if (diskChunks > 0) {
            m.put("disk", diskHitTokens);
        }
        if (remote != null) {
            m.put("remote", remote.hitTokens());
        }
        return m;
    }

    /** Chunks written into each tier: loads into the device, stores into the host. */
    public Map<String, Long> chunksWrittenByTier() {
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("device", deviceChunksLoaded);
        m.put("host", hostChunksWritten);
        if (diskChunks > 0) {
            m.put("disk", diskChunksWritten);
        }
        if (remote != null) {
            m.put("remote", remote.chunksWritten());
        }
        return m;
    }

    /** Belady's hit ratio at the same capacity, or NaN without an optimum. */
    public double optimumTokenHitRatio() {
        return optimum == null ? Double.NaN : ratio(optimum.beladyHitTokens());
    }

    /** The unbounded cache's hit ratio, or NaN without an optimum. */
    public double ceilingTokenHitRatio() {
        return optimum == null ? Double.NaN : ratio(optimum.ceilingHitTokens());
    }

    /** This policy's hit tokens as a fraction of the optimum's, or NaN without one. */
    public double fractionOfOptimum() {
        return optimum == null ? Double.NaN
                : optimum.beladyHitTokens() == 0 ? 1.0 : (double) hitTokens() / optimum.beladyHitTokens();
    }

    /** {@code tokens} / prompt tokens. */
    public double ratio(long tokens) {
        return promptTokens == 0 ? 0 : (double) tokens / promptTokens;
    }
}

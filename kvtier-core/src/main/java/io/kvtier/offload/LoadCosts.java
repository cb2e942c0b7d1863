package io.kvtier.offload;

import java.util.Map;
import java.util.TreeMap;

/**
 * Online estimates behind "load or recompute" ({@code --load-policy faster}): each tier's load
 * bandwidth and the engine's prefill speed, and the choice of how many chunks of a hit to load.
 *
 * <p>Bandwidth of a tier = EWMA (weight {@value #ALPHA}) over completed, successful jobs that
 * brought chunks from it toward the device (host: load jobs; disk and remote: promotions into the
 * host tier) of {@code bytes / seconds}, the job's whole time (queueing and fixed costs included,
 * as a request waits for them). Prefill speed = EWMA of {@code tokens / seconds} over forward
 * passes of at least {@code minTokens} tokens (smaller ones are decode steps, dominated by the
 * weight reads, which would make recomputing look slower than it is). Times come from the transfer
 * engine's clock, so a replay's virtual time works the same way.
 *
 * <p>The choice: loading the first {@code k} chunks of a hit and recomputing the rest costs
 * {@code sum_{i<k} load_i + sum_{i>=k} recompute_i}; this picks the {@code k} that minimises it
 * (ties: more loading). {@code load_i = blocks_i / bandwidth(tier_i)} (in blocks/s, tracked beside bytes/s) (a disk or remote chunk adds
 * the host load after its promotion); {@code recompute_i = tokens_i / prefill speed}. Before a
 * tier has a measured load the hit is loaded (that load gives the first measurement). Engine
 * thread only.
 */
final class LoadCosts {

    /** Weight of the newest observation in each EWMA. */
    static final double ALPHA = 0.2;

    private final int minTokens;
    private final Map<String, Double> bytesPerSecond = new TreeMap<>();
    // Decisions use blocks/s: a replay's pool holds placeholder blocks whose size is not the
    // simulated model's, while job bytes are; blocks are the same unit on both sides.
    private final Map<String, Double> blocksPerSecond = new TreeMap<>();
    private double tokensPerSecond = Double.NaN;

    /** @param minTokens smallest forward pass, tokens, that updates the prefill speed (>= 1) */
    LoadCosts(int minTokens) {
        this.minTokens = Math.max(1, minTokens);
    }

    /** A successful job moved {@code blocks} device blocks ({@code bytes}) from {@code tier} in {@code nanos}. */
    void onLoad(String tier, long blocks, long bytes, long nanos) {
        if (blocks <= 0 || nanos <= 0) {
            return;
        }
        blocksPerSecond.merge(tier, blocks * 1e9 / nanos, (old, now) -> old + ALPHA * (now - old));
        bytesPerSecond.merge(tier, bytes * 1e9 / nanos, (old, now) -> old + ALPHA * (now - old));
    }

    /** A forward pass computed {@code tokens} tokens in {@code nanos}. */
    void onForward(long tokens, long nanos) {
        if (tokens < minTokens || nanos <= 0) {
            return;
        }
        double speed = tokens * 1e9 / nanos;
        tokensPerSecond = Double.isNaN(tokensPerSecond) ? speed : tokensPerSecond + ALPHA * (speed - tokensPerSecond);
    }

    /** Measured load bandwidth per tier, bytes/s (tiers with no completed job are absent). */
    Map<String, Double> bandwidths() {
        return Map.copyOf(bytesPerSecond);
    }

    /** Measured prefill speed, tokens/s; NaN before the first forward pass of at least minTokens. */
    double tokensPerSecond() {
        return tokensPerSecond;
    }

    /**
     * How many leading chunks of a hit to load.
     *
     * @param tiers  tier of each chunk of the hit, head first ({@code host}, {@code disk}, {@code remote})
     * @param blocks device blocks each chunk would fill (the first may be partly on the device)
     * @param blockSize tokens per block
     * @return a number in {@code [0, tiers.length]}
     */
    int chunksToLoad(String[] tiers, int[] blocks, int blockSize) {
        if (Double.isNaN(tokensPerSecond)) {
            return tiers.length;
        }
        double gain = 0;
        double best = 0;
        int bestK = 0;
        for (int i = 0; i < tiers.length; i++) {
            double load = seconds(tiers[i], blocks[i]);
            if (Double.isNaN(load)) {
                return tiers.length; // a tier never measured: load, and measure it
            }
            gain += blocks[i] * (double) blockSize / tokensPerSecond - load;
            if (gain >= best) {
                best = gain;
                bestK = i + 1;
            }
        }
        return bestK;
    }

    /** Seconds to bring {@code blocks} from {@code tier} to the device; NaN if a needed tier was never measured. */
    private double seconds(String tier, int blocks) {
        Double host = blocksPerSecond.get(io.kvtier.tier.HostTier.NAME);
        if (host == null) {
            return Double.NaN;
        }
        double t = blocks / host;
        if (!io.kvtier.tier.HostTier.NAME.equals(tier)) {
            Double lower = blocksPerSecond.get(tier);
            if (lower == null) {
                return Double.NaN;
            }
            t += blocks / lower;
        }
        return t;
    }

    /**
     * Cuts a hit to the chunks worth loading ({@link #chunksToLoad}) and counts the decision and
     * its inputs in {@code stats}. {@link OffloadScheduler.Lookup.Miss} and
     * {@link OffloadScheduler.Lookup.Wait} pass unchanged.
     *
     * @param deviceHitBlocks blocks of the request already on the device (the hit starts there)
     */
    OffloadScheduler.Lookup decide(OffloadScheduler.Lookup found, int deviceHitBlocks, int blocksPerChunk,
                                   int blockSize, OffloadStats stats) {
        int hostChunks;
        int lowerChunks;
        String lowerTier;
        switch (found) {
            case OffloadScheduler.Lookup.Hit h -> {
                hostChunks = (deviceHitBlocks + h.blocks()) / blocksPerChunk - deviceHitBlocks / blocksPerChunk;
                lowerChunks = 0;
                lowerTier = null;
            }
            case OffloadScheduler.Lookup.Promote p -> {
                hostChunks = p.hostChunks();
                lowerChunks = p.diskChunks() > 0 ? p.diskChunks() : p.remoteChunks();
                lowerTier = p.diskChunks() > 0 ? "disk" : "remote";
            }
            default -> {
                return found;
            }
        }
        int n = hostChunks + lowerChunks;
        String[] tiers = new String[n];
        int[] blocks = new int[n];
        int firstChunk = deviceHitBlocks / blocksPerChunk;
        for (int i = 0; i < n; i++) {
            tiers[i] = i < hostChunks ? io.kvtier.tier.HostTier.NAME : lowerTier;
            blocks[i] = (firstChunk + i + 1) * blocksPerChunk - Math.max((firstChunk + i) * blocksPerChunk, deviceHitBlocks);
        }
        int k = chunksToLoad(tiers, blocks, blockSize);
        stats.loadDecisions++;
        stats.loadBandwidth = bandwidths();
        stats.prefillTokensPerSecond = tokensPerSecond;
        if (k == n) {
            return found;
        }
        int loaded = 0;
        int recomputed = 0;
        for (int i = 0; i < n; i++) {
            if (i < k) {
                loaded += blocks[i];
            } else {
                recomputed += blocks[i];
            }
        }
        stats.hitsRecomputed += k == 0 ? 1 : 0;
        stats.hitsCut += k > 0 ? 1 : 0;
        stats.tokensRecomputedByChoice += (long) recomputed * blockSize;
        if (k > hostChunks) {
            OffloadScheduler.Lookup.Promote p = (OffloadScheduler.Lookup.Promote) found;
            int lower = k - hostChunks;
            return new OffloadScheduler.Lookup.Promote(hostChunks, p.diskChunks() > 0 ? lower : 0, p.diskChunks() > 0 ? 0 : lower);
        }
        return loaded == 0 ? new OffloadScheduler.Lookup.Miss() : new OffloadScheduler.Lookup.Hit(io.kvtier.tier.HostTier.NAME, loaded);
    }
}

package io.kvtier.offload;

import io.kvtier.tier.HostTier;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * Online estimates behind "load or recompute" ({@code --load-policy faster}) and the choice of how
 * many leading chunks of a hit to load. Times come from the transfer engine's clock, so a
 * replay's virtual time works the same way. Engine thread only.
 *
 * <p><b>Recompute</b>: every forward pass of at least {@code minTokens} tokens (one chunk's) feeds
 * a least-squares fit ({@link OnlineLinearFit}, forgetting {@value #STEP_FORGET}) of its time as
 * {@code c + a T + b P + d D}: {@code T} tokens, {@code P} causal pairs of its prefill chunks,
 * {@code D} context read by its decodes ({@link StepShape}). Recomputing {@code n} tokens from
 * position {@code s} then costs {@code a n + b pairs(s, n) + c n / stepTokens}: the matmuls per
 * token, attention growing with the chunk's position (quadratic over a prompt), and the steps it
 * adds. Smaller passes are not fitted: below about one chunk a step is bound by reading the
 * weights, not by its tokens. Until {@value #MIN_FIT} passes are fitted (or if the token term
 * fits non-positive), the average time per token of those passes is used.
 *
 * <p><b>Load</b>: per tier, a fit of a job's time (its execution, not its wait in the queue) as
 * {@code latency + blocks x per-block time} over completed successful jobs bringing blocks toward
 * the device (host: loads; disk and remote: promotions into the host tier). A load waits first for
 * the blocks already queued on its lane ahead of it, and, when other requests run, for the end
 * of the step during which it completes (half a step on average).
 *
 * <p><b>Contention</b>: recomputing delays every request whose first token waits on the engine
 * ({@link Contention#waitingForFirstToken()}), so its time counts {@code 1 + waiting} times; a load
 * delays only its own request. Loading the first {@code k} chunks and recomputing the rest costs
 * {@code [k > 0] (queue + latency + step wait) + sum_{i<k} load_i + (1 + waiting) sum_{i>=k}
 * recompute_i}; the decision takes the {@code k} that minimises it (ties: more loading).
 *
 * <p><b>Before the first load</b>: the host tier's load is priced per block from the store lane's
 * measured time per block (the same link, device to host) until a load was measured; before either,
 * or before the step time or a lower tier has a measurement, the hit is loaded (that load is the
 * first measurement).
 */
final class LoadCosts {

    /** Weight kept by past steps at each fitted step. */
    static final double STEP_FORGET = 0.98;
    /** Weight kept by past jobs of a tier at each job. */
    static final double LOAD_FORGET = 0.95;
    /** Fitted passes before the step-time fit is trusted. */
    static final int MIN_FIT = 8;
    /** Weight of the newest observation in each EWMA. */
    static final double ALPHA = 0.2;

    private final int minTokens;
    private final OnlineLinearFit step = new OnlineLinearFit(4, STEP_FORGET);
    private double nanosPerToken = Double.NaN;
    private double stepNanos = Double.NaN;
    private final Map<String, OnlineLinearFit> loadFits = new HashMap<>();
    private final Map<String, Double> nanosPerBlock = new HashMap<>();
    private final Map<String, Double> bytesPerSecond = new TreeMap<>();
    /** EWMA of a store job's execution time per device block (the store lane, device to host). */
    private double storeNanosPerBlock = Double.NaN;

    /** @param minTokens smallest forward pass, tokens, that updates the recompute fit (>= 1) */
    LoadCosts(int minTokens) {
        this.minTokens = Math.max(1, minTokens);
    }

    /** A successful job moved {@code blocks} device blocks ({@code bytes}) from {@code tier} in {@code nanos}. */
    void onLoad(String tier, long blocks, long bytes, long nanos) {
        if (blocks <= 0 || nanos <= 0) {
            return;
        }
        loadFits.computeIfAbsent(tier, t -> new OnlineLinearFit(2, LOAD_FORGET)).add(new double[] {1, blocks}, nanos);
        nanosPerBlock.merge(tier, nanos / (double) blocks, (old, now) -> old + ALPHA * (now - old));
        bytesPerSecond.merge(tier, bytes * 1e9 / nanos, (old, now) -> old + ALPHA * (now - old));
    }

    /** A successful store job copied {@code blocks} device blocks to the host tier in {@code nanos} (its execution, not its wait). */
    void onStore(long blocks, long nanos) {
        if (blocks > 0 && nanos > 0) {
            storeNanosPerBlock = ewma(storeNanosPerBlock, nanos / (double) blocks);
        }
    }

    /** A forward pass of shape {@code s} took {@code nanos}. */
    void onForward(StepShape s, long nanos) {
        if (nanos <= 0 || s.tokens() <= 0) {
            return;
        }
        stepNanos = ewma(stepNanos, nanos);
        if (s.tokens() < minTokens) {
            return;
        }
        step.add(new double[] {1, s.tokens(), s.pairs(), s.decodeContext()}, nanos);
        nanosPerToken = ewma(nanosPerToken, nanos / (double) s.tokens());
    }

    private static double ewma(double old, double now) {
        return Double.isNaN(old) ? now : old + ALPHA * (now - old);
    }

    /** Measured load bandwidth per tier, bytes/s (tiers with no completed job are absent). */
    Map<String, Double> bandwidths() {
        return Collections.unmodifiableSortedMap(new TreeMap<>(bytesPerSecond));
    }

    /** Estimated marginal prefill speed, tokens/s, at position 0 in a full step; NaN before any pass was measured. */
    double tokensPerSecond(int stepTokens) {
        double ns = recomputeNanos(0, 1, stepTokens) - StepShape.pairs(0, 1) * coefficient(2);
        return ns > 0 ? 1e9 / ns : Double.NaN;
    }

    private boolean fitted() {
        return step.count() >= MIN_FIT && step.coefficients()[1] > 0;
    }

    private double coefficient(int j) {
        return fitted() ? Math.max(0, step.coefficients()[j]) : 0;
    }

    /** Nanoseconds of step time that recomputing {@code n} tokens from position {@code start} adds; NaN before any measure. */
    double recomputeNanos(long start, long n, int stepTokens) {
        if (!fitted()) {
            return n * nanosPerToken;
        }
        return n * (coefficient(1) + coefficient(0) / stepTokens) + StepShape.pairs(start, n) * coefficient(2);
    }

    /** Per-job fixed nanoseconds of a tier's loads: the fit's intercept once 3 jobs are fitted, else 0. */
    private double latency(String tier) {
        OnlineLinearFit f = loadFits.get(tier);
        return f == null || f.count() < 3 ? 0 : Math.max(0, f.coefficients()[0]);
    }

    /** Nanoseconds per block of a tier's loads; NaN before its first job. */
    private double perBlock(String tier) {
        OnlineLinearFit f = loadFits.get(tier);
        if (f == null) {
            return Double.NaN;
        }
        double[] b = f.coefficients();
        // Fewer than 3 jobs, or a fit with no positive term: the whole time per block, no latency.
        if (f.count() < 3 || (b[0] <= 0 && b[1] <= 0)) {
            return nanosPerBlock.get(tier);
        }
        return Math.max(0, b[1]);
    }

    /**
     * Nanoseconds per block of a host load: measured loads once there is one, else the store lane's
     * measured time per block (a slow link is slow both ways, so the first hit is not loaded blind);
     * NaN before either.
     */
    private double hostPerBlock() {
        double load = perBlock(HostTier.NAME);
        return Double.isNaN(load) ? storeNanosPerBlock : load;
    }

    /**
     * How many leading chunks of a hit to load.
     *
     * @param tiers        tier of each chunk of the hit, head first ({@code host}, {@code disk}, {@code remote})
     * @param blocks       device blocks each chunk would fill (the first may be partly on the device)
     * @param startTokens  position of each chunk's first token to fill
     * @param blockSize    tokens per block
     * @param queued       blocks already queued on each tier's load lane (absent: none)
     * @param c            the engine's load now
     * @return a number in {@code [0, tiers.length]}
     */
    int chunksToLoad(String[] tiers, int[] blocks, long[] startTokens, int blockSize, Map<String, Long> queued, Contention c) {
        if (Double.isNaN(nanosPerToken)) {
            return tiers.length;
        }
        double hostBlock = hostPerBlock();
        if (Double.isNaN(hostBlock)) {
            return tiers.length; // neither lane measured: load, and measure it
        }
        double waitStep = c.engineBusy() && !Double.isNaN(stepNanos) ? stepNanos / 2 : 0;
        double fixed = latency(HostTier.NAME) + queued.getOrDefault(HostTier.NAME, 0L) * hostBlock + waitStep;
        double weight = 1.0 + c.waitingForFirstToken();
        double[] recompute = new double[tiers.length];
        double recomputeAll = 0;
        for (int i = 0; i < tiers.length; i++) {
            recompute[i] = weight * recomputeNanos(startTokens[i], (long) blocks[i] * blockSize, c.stepTokens());
            recomputeAll += recompute[i];
        }
        double best = recomputeAll;
        int bestK = 0;
        double cost = fixed + recomputeAll;
        boolean lowerStarted = false;
        for (int i = 0; i < tiers.length; i++) {
            double load = blocks[i] * hostBlock;
            if (!HostTier.NAME.equals(tiers[i])) {
                double lower = perBlock(tiers[i]);
                if (Double.isNaN(lower)) {
                    return tiers.length;
                }
                if (!lowerStarted) { // the promotion's own queue and latency, once
                    load += latency(tiers[i]) + queued.getOrDefault(tiers[i], 0L) * lower;
                    lowerStarted = true;
                }
                load += blocks[i] * lower;
            }
            cost += load - recompute[i];
            if (cost <= best) {
                best = cost;
                bestK = i + 1;
            }
        }
        return bestK;
    }

    /**
     * The third answer of load or recompute, for a hit whose load was chosen but whose device
     * blocks are short at admission (a load needs all its blocks at once; a recompute only its
     * first step's). Holding the line until they come free would stall every request behind it.
     *
     * <ul>
     *   <li>{@link BlockWait#RECOMPUTE}: the request has waited longer than recomputing its hit
     *       would cost ({@code waited > R}, the bound that keeps it from being passed forever).
     *   <li>{@link BlockWait#WAIT}: {@code W + L <= R}: neither load nor recompute now; requests
     *       behind it pass.
     *   <li>{@link BlockWait#STALL} otherwise, or when the blocks' return cannot be estimated (the
     *       stores in flight do not free enough of them; nothing measured yet): hold the line, as before.
     * </ul>
     * {@code W} = when the stores pinning the missing blocks end: the blocks the store lane copies
     * until then times the measured store time per block, but no later than the latest of those
     * stores' deadlines (a store ends by its deadline, copied or failed); {@code L} = the lane's
     * queue, latency, step wait and the load itself; {@code R} = {@code (1 + waiting)} x the hit's
     * recompute.
     *
     * @param blocks      device blocks the load would fill
     * @param startToken  position of the first token it would fill
     * @param stores      the stores that free the missing blocks, or null if those in flight cannot
     * @param nowNanos    the transfer clock now, ns
     * @param waitedNanos how long the request has already been passed, ns
     */
    BlockWait whenBlocksShort(int blocks, long startToken, int blockSize, JobRegistry.StoresAhead stores, long nowNanos,
                              long waitedNanos, Map<String, Long> queued, Contention c) {
        double hostBlock = hostPerBlock();
        if (stores == null || Double.isNaN(hostBlock) || Double.isNaN(nanosPerToken)) {
            return BlockWait.STALL;
        }
        double free = Math.max(0, (double) stores.deadlineNanos() - nowNanos);
        if (!Double.isNaN(storeNanosPerBlock)) {
            free = Math.min(free, stores.blocks() * storeNanosPerBlock);
        }
        double recompute = (1.0 + c.waitingForFirstToken()) * recomputeNanos(startToken, (long) blocks * blockSize, c.stepTokens());
        if (waitedNanos > recompute) {
            return BlockWait.RECOMPUTE;
        }
        double waitStep = c.engineBusy() && !Double.isNaN(stepNanos) ? stepNanos / 2 : 0;
        double load = latency(HostTier.NAME) + (queued.getOrDefault(HostTier.NAME, 0L) + blocks) * hostBlock + waitStep;
        // Dearer to wait than to recompute: hold the line as before (recomputing here measured worse: 4 GB/s, 96% busy, +6% p50).
        return free + load <= recompute ? BlockWait.WAIT : BlockWait.STALL;
    }

    /**
     * Cuts a hit to the chunks worth loading ({@link #chunksToLoad}; none with {@link LoadPolicy#NEVER})
     * and counts the decision and its inputs in {@code stats}. {@link Lookup.Miss}
     * and {@link Lookup.Wait} pass unchanged.
     *
     * @param deviceHitBlocks blocks of the request already on the device (the hit starts there)
     * @param queued          blocks already queued on each tier's load lane
     * @param count           whether to count the decision (false: the request's decision was counted at an earlier step)
     */
    Lookup decide(LoadPolicy policy, Lookup found, int deviceHitBlocks, int blocksPerChunk,
                                   int blockSize, Map<String, Long> queued, Contention c, OffloadStats stats, boolean count) {
        int hostChunks;
        int lowerChunks;
        String lowerTier;
        switch (found) {
            case Lookup.Hit h -> {
                hostChunks = (deviceHitBlocks + h.blocks()) / blocksPerChunk - deviceHitBlocks / blocksPerChunk;
                lowerChunks = 0;
                lowerTier = null;
            }
            case Lookup.Promote p -> {
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
        long[] starts = new long[n];
        int firstChunk = deviceHitBlocks / blocksPerChunk;
        for (int i = 0; i < n; i++) {
            tiers[i] = i < hostChunks ? HostTier.NAME : lowerTier;
            int from = Math.max((firstChunk + i) * blocksPerChunk, deviceHitBlocks);
            blocks[i] = (firstChunk + i + 1) * blocksPerChunk - from;
            starts[i] = (long) from * blockSize;
        }
        int k = policy == LoadPolicy.NEVER ? 0 : chunksToLoad(tiers, blocks, starts, blockSize, queued, c);
        stats.loadBandwidth = bandwidths();
        stats.prefillTokensPerSecond = tokensPerSecond(c.stepTokens());
        stats.loadDecisions += count ? 1 : 0;
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
        if (count) {
            stats.hitsRecomputed += k == 0 ? 1 : 0;
            stats.hitsCut += k > 0 ? 1 : 0;
            stats.tokensRecomputedByChoice += (long) recomputed * blockSize;
        }
        if (k > hostChunks) {
            Lookup.Promote p = (Lookup.Promote) found;
            int lower = k - hostChunks;
            return new Lookup.Promote(hostChunks, p.diskChunks() > 0 ? lower : 0, p.diskChunks() > 0 ? 0 : lower);
        }
        return loaded == 0 ? new Lookup.Miss() : new Lookup.Hit(HostTier.NAME, loaded);
    }
}

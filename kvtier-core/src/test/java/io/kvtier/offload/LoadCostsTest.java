package io.kvtier.offload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.kvtier.tier.HostTier;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Load or recompute's cost model on steps and loads of known cost (the replay's reference
 * roofline in its compute-bound region: 0.5 ms a step, 32.5 us a token, 1.31 ns a causal pair,
 * 48.9 ns a decode's context position), so every expected value is computed here.
 */
class LoadCostsTest {

    private static final int BLOCK = 512;
    private static final int STEP_TOKENS = 8192;

    private static double stepNanos(StepShape s) {
        return 500_000 + 32_500.0 * s.tokens() + 1.31 * s.pairs() + 48.9 * s.decodeContext();
    }

    /** Steps of varied shape (1-3 prefill chunks at varied positions, 0-40 decodes), fitted. */
    private static LoadCosts fittedOnSteps(long seed) {
        LoadCosts costs = new LoadCosts(BLOCK);
        Random rnd = new Random(seed);
        for (int step = 0; step < 40; step++) {
            int prefills = 1 + rnd.nextInt(3);
            int decodes = rnd.nextInt(41);
            int[] starts = new int[prefills + decodes];
            int[] counts = new int[starts.length];
            for (int i = 0; i < starts.length; i++) {
                starts[i] = rnd.nextInt(30_000);
                counts[i] = i < prefills ? BLOCK + rnd.nextInt(2_000) : 1;
            }
            StepShape s = StepShape.of(starts, counts);
            costs.onForward(s, Math.round(stepNanos(s)));
        }
        return costs;
    }

    @Test
    void theFitRecoversTheStepCostsAndPricesARecomputeByItsPosition() {
        for (long seed : new long[] {1, 2, 3}) {
            LoadCosts costs = fittedOnSteps(seed);
            // 512 tokens from position 0: 512 x 32.5 us + 1.31 ns x 131,328 pairs + 0.5 ms x 512 / 8192.
            double atZero = 512 * 32_500.0 + 1.31 * (512 * 513 / 2.0) + 500_000.0 * 512 / STEP_TOKENS;
            assertThat(costs.recomputeNanos(0, 512, STEP_TOKENS)).as("seed %d", seed).isCloseTo(atZero, within(atZero * 1e-3));
            // The same chunk from position 10,000 reads 512 x 10,000 more pairs: 6.71 ms more.
            assertThat(costs.recomputeNanos(10_000, 512, STEP_TOKENS) - costs.recomputeNanos(0, 512, STEP_TOKENS))
                    .as("seed %d", seed).isCloseTo(1.31 * 512 * 10_000, within(1.31 * 512 * 10_000 * 1e-3));
            assertThat(costs.tokensPerSecond(STEP_TOKENS)).isCloseTo(1e9 / (32_500 + 500_000.0 / STEP_TOKENS), within(1.0));
        }
    }

    @Test
    void decodeStepsAreNotFittedAsPrefill() {
        LoadCosts costs = fittedOnSteps(4);
        // A weight-bound decode step: 6.5 ms for 8 tokens would be 0.8 ms a token if it were fitted.
        for (int i = 0; i < 20; i++) {
            costs.onForward(new StepShape(8, 0, 80_000), 6_500_000);
        }
        assertThat(costs.recomputeNanos(0, 512, STEP_TOKENS)).isLessThan(20e6);
    }

    /** Host loads of 1..6 blocks costing 10 us + perBlock each. */
    private static void loads(LoadCosts costs, double perBlockNanos) {
        for (int b = 1; b <= 6; b++) {
            costs.onLoad(HostTier.NAME, b, b * 64L << 20, Math.round(10_000 + b * perBlockNanos));
        }
    }

    private static int decide(LoadCosts costs, int chunks, long queuedBlocks, Contention c) {
        String[] tiers = new String[chunks];
        int[] blocks = new int[chunks];
        long[] starts = new long[chunks];
        for (int i = 0; i < chunks; i++) {
            tiers[i] = HostTier.NAME;
            blocks[i] = 1;
            starts[i] = (long) i * BLOCK;
        }
        return costs.chunksToLoad(tiers, blocks, starts, BLOCK, Map.of(HostTier.NAME, queuedBlocks), c);
    }

    @Test
    void aLoadSlowerThanTheRecomputeIsRecomputedWhenIdleAndLoadedWhenOthersWaitForTheGpu() {
        LoadCosts costs = fittedOnSteps(5);
        loads(costs, 20e6); // 20 ms a 512-token block; its recompute is about 16.8-17.5 ms
        assertThat(decide(costs, 2, 0, Contention.idle(STEP_TOKENS))).isZero();
        // One other request waits for its first token: a recompute costs it as much as its own.
        assertThat(decide(costs, 2, 0, new Contention(1, false, STEP_TOKENS))).isEqualTo(2);
    }

    @Test
    void aFastLoadIsRecomputedWhenTheLaneIsQueued() {
        LoadCosts costs = fittedOnSteps(6);
        loads(costs, 10e6); // 10 ms a block: loading 2 blocks (20 ms) beats recomputing them (~34 ms)
        assertThat(decide(costs, 2, 0, Contention.idle(STEP_TOKENS))).isEqualTo(2);
        // 10 blocks queued ahead on the lane: 100 ms more.
        assertThat(decide(costs, 2, 10, Contention.idle(STEP_TOKENS))).isZero();
    }

    @Test
    void aConstantDelayIsFittedAsLatencyNotPerBlock() {
        LoadCosts costs = fittedOnSteps(7);
        for (int b = 1; b <= 6; b++) {
            costs.onLoad(HostTier.NAME, b, b * 64L << 20, 300_000_000); // 300 ms whatever the size
        }
        // 20 chunks: recompute ~ 20 x 17 ms + attention (~0.5 s) against 300 ms: load.
        assertThat(decide(costs, 20, 0, Contention.idle(STEP_TOKENS))).isEqualTo(20);
        // 4 chunks: ~70 ms of recompute against 300 ms: recompute.
        assertThat(decide(costs, 4, 0, Contention.idle(STEP_TOKENS))).isZero();
    }

    @Test
    void nothingMeasuredLoadsAndNeverRecomputesEverything() {
        LoadCosts costs = new LoadCosts(BLOCK);
        assertThat(decide(costs, 3, 0, Contention.idle(STEP_TOKENS))).isEqualTo(3);
        OffloadStats stats = new OffloadStats();
        Lookup out = costs.decide(LoadPolicy.NEVER, new Lookup.Hit(HostTier.NAME, 3), 0, 1,
                BLOCK, Map.of(), Contention.idle(STEP_TOKENS), stats, true);
        assertThat(out).isInstanceOf(Lookup.Miss.class);
        assertThat(stats.loadDecisions().decided()).isEqualTo(1);
        assertThat(stats.loadDecisions().recomputed()).isEqualTo(1);
        assertThat(stats.loadDecisions().tokensRecomputed()).isEqualTo(3L * BLOCK);
    }

    @Test
    void beforeAnyLoadTheHostTierIsPricedFromTheStoreLane() {
        LoadCosts costs = fittedOnSteps(9);
        // No load and no store measured: the first hit is loaded blind (it is the first measurement).
        assertThat(decide(costs, 2, 0, Contention.idle(STEP_TOKENS))).isEqualTo(2);
        // A slow store lane: 40 ms a block device to host against a recompute of about 17 ms a block.
        costs.onStore(3, 120_000_000);
        assertThat(decide(costs, 2, 0, Contention.idle(STEP_TOKENS))).as("slow store lane").isZero();
        // With 3 requests waiting, recomputing 2 blocks costs 4 x ~34 ms, more than 80 ms of loading.
        assertThat(decide(costs, 2, 0, new Contention(3, false, STEP_TOKENS))).as("3 waiting").isEqualTo(2);
        // A fast store lane (5 ms a block): loaded.
        LoadCosts fast = fittedOnSteps(9);
        fast.onStore(2, 10_000_000);
        assertThat(decide(fast, 2, 0, Contention.idle(STEP_TOKENS))).as("fast store lane").isEqualTo(2);
        // Once a load is measured it prices the lane, not the stores: 5 ms a load block against the slow stores.
        loads(costs, 5e6);
        assertThat(decide(costs, 2, 0, Contention.idle(STEP_TOKENS))).as("loads measured").isEqualTo(2);
    }

    /** 4 blocks from position 0 with {@code waiting} requests waiting; the stores ahead end by 10 s from now at the latest. */
    private static BlockWait shortBy(LoadCosts costs, long storeBlocksAhead, long waitedNanos, int waiting) {
        JobRegistry.StoresAhead ahead = storeBlocksAhead < 0 ? null : new JobRegistry.StoresAhead(storeBlocksAhead, 10_000_000_000L);
        return costs.whenBlocksShort(4, 0, BLOCK, ahead, 0, waitedNanos, Map.of(), new Contention(waiting, false, STEP_TOKENS));
    }

    @Test
    void aLoadShortOfDeviceBlocksWaitsWhileTheStoresFreeThemSoonerThanARecomputeAndNoLonger() {
        LoadCosts costs = fittedOnSteps(8);
        loads(costs, 10e6); // 10 ms a block (latency 10 us)
        double recompute = 10 * costs.recomputeNanos(0, 4 * BLOCK, STEP_TOKENS); // 9 waiting: ~694 ms
        double load = 10_000 + 4 * 10e6; // latency + 4 blocks
        // No store measured yet: the stores' deadlines (10 s away) bound the wait: dearer than recomputing, hold the line.
        assertThat(shortBy(costs, 3, 0, 9)).isEqualTo(BlockWait.STALL);
        assertThat(costs.whenBlocksShort(4, 0, BLOCK, new JobRegistry.StoresAhead(3, 600_000_000L), 0, 0, Map.of(),
                new Contention(9, false, STEP_TOKENS))).as("stores due in 600 ms").isEqualTo(BlockWait.WAIT);
        costs.onStore(2, 128_000_000); // 64 ms a block on the store lane (a 64 MiB block at 1 GB/s)
        long most = (long) Math.floor((recompute - load) / 64e6); // store blocks ahead that still pay: 10
        assertThat(most).isEqualTo(10);
        assertThat(shortBy(costs, most, 0, 9)).isEqualTo(BlockWait.WAIT);
        assertThat(shortBy(costs, most + 1, 0, 9)).isEqualTo(BlockWait.STALL);
        // The stores in flight do not free enough blocks (the rest are held by requests): hold the line.
        assertThat(shortBy(costs, -1, 0, 9)).isEqualTo(BlockWait.STALL);
        // The bound: passed for longer than the recompute would cost, it is recomputed even if the blocks come soon.
        assertThat(shortBy(costs, 1, (long) recompute - 1, 9)).isEqualTo(BlockWait.WAIT);
        assertThat(shortBy(costs, 1, (long) recompute + 1, 9)).isEqualTo(BlockWait.RECOMPUTE);
        // An idle engine: the recompute (~69 ms) costs only its own request; one store block ahead (64 ms + 40 ms load) is dearer.
        assertThat(shortBy(costs, 0, 0, 0)).isEqualTo(BlockWait.WAIT);
        assertThat(shortBy(costs, 1, 0, 0)).isEqualTo(BlockWait.STALL);
    }

    @Test
    void theStoreLaneFreesPinnedBlocksInSubmissionOrder() {
        try (io.kvtier.kv.BlockPool pool = new io.kvtier.kv.BlockPool(8, new io.kvtier.kv.KvLayout(1, 1, 1, 16))) {
            JobRegistry jobs = new JobRegistry();
            int[] b = new int[6];
            for (int i = 0; i < b.length; i++) {
                b[i] = pool.allocate(); // reference 1: the store's (its request finished)
            }
            pool.retain(b[2]); // b[2] is also held by a running request: a store's end does not free it
            jobs.add(store(jobs.newId(), 1, 300, b[0], b[1]));
            jobs.add(store(jobs.newId(), 2, 200, b[2], b[3]));
            jobs.add(store(jobs.newId(), 3, 500, b[4], b[5]));
            assertThat(jobs.storesUntilFree(pool, 0).blocks()).isZero();
            assertThat(jobs.storesUntilFree(pool, 2)).isEqualTo(new JobRegistry.StoresAhead(2, 300)); // the first frees b0, b1
            assertThat(jobs.storesUntilFree(pool, 3)).isEqualTo(new JobRegistry.StoresAhead(4, 300)); // the second frees only b3
            assertThat(jobs.storesUntilFree(pool, 5)).isEqualTo(new JobRegistry.StoresAhead(6, 500));
            assertThat(jobs.storesUntilFree(pool, 6)).isNull(); // b2 stays held
            assertThat(jobs.blocksFreedByStores(pool)).isEqualTo(5);
        }
    }

    private static OffloadJob.Store store(long id, long request, long deadline, int... blocks) {
        return new OffloadJob.Store(id, request, HostTier.NAME, 0, blocks, java.util.List.of(), 0, deadline);
    }

    @Test
    void theFitSolvesExactlyAndLeavesUnseenFeaturesAtZero() {
        OnlineLinearFit f = new OnlineLinearFit(3, 1.0);
        f.add(new double[] {1, 2, 0}, 7);
        f.add(new double[] {1, 5, 0}, 13);
        f.add(new double[] {1, 9, 0}, 21);
        double[] b = f.coefficients();
        assertThat(b[0]).isCloseTo(3, within(1e-4));
        assertThat(b[1]).isCloseTo(2, within(1e-4));
        assertThat(b[2]).isZero();
        assertThat(f.predict(new double[] {1, 10, 4})).isCloseTo(23, within(1e-3));
    }
}

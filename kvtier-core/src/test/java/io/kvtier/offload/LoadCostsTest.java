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
        assertThat(decide(costs, 2, 0, new Contention(1, false, STEP_TOKENS, Integer.MAX_VALUE))).isEqualTo(2);
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

    /**
     * A busy engine whose steps fill blocks at a known rate: 40 passes of one 4,096-token chunk
     * from position 0, each 0.5 ms + 4,096 x 32.5 us + 1.31 ns x 8,390,656 pairs = 144.62 ms, so
     * the steps fill 8 blocks per 144.62 ms (55.3 blocks/s; the mean's EWMA converges to within
     * 0.8^40 = 1e-4 of that).
     */
    private static LoadCosts busyEngine(long seed) {
        LoadCosts costs = fittedOnSteps(seed);
        StepShape pass = StepShape.of(new int[] {0}, new int[] {4096});
        for (int i = 0; i < 40; i++) {
            costs.onForward(pass, Math.round(stepNanos(pass)));
        }
        return costs;
    }

    @Test
    void aParkedLoadIsChargedTheBlocksTheStepsFillBeyondTheFreeOnes() {
        double fill = 8 / stepNanos(StepShape.of(new int[] {0}, new int[] {4096})); // blocks a ns
        assertThat(fill * 1e9).isCloseTo(55.32, within(0.01));
        // Memory to spare: nothing preempted.
        assertThat(LoadCosts.parkedShort(4, 400e6, fill, Integer.MAX_VALUE)).isZero();
        // 8 free, 4 held: 4 spare. 100 ms fills 5.53 blocks, 1.53 beyond the spare ones.
        assertThat(LoadCosts.parkedShort(4, 100e6, fill, 8)).isCloseTo(fill * 100e6 - 4, within(1e-9));
        // 400 ms fills 22.1: every held block is taken from someone; 50 ms fills 2.8: none.
        assertThat(LoadCosts.parkedShort(4, 400e6, fill, 8)).isEqualTo(4.0);
        assertThat(LoadCosts.parkedShort(4, 50e6, fill, 8)).isZero();
    }

    @Test
    void aSlowLoadOnAFullDeviceLoadsOnlyWhatItsParkedBlocksDoNotTakeFromOthers() {
        for (long seed : new long[] {8, 9}) {
            LoadCosts costs = busyEngine(seed);
            loads(costs, 100e6); // 100 ms a 512-token block (0.67 GB/s at 128 KiB a token)
            // No step to wait for (engineBusy false keeps the arithmetic plain).
            // 4 chunks of 1 block, recompute 16.84, 17.19, 17.53, 17.88 ms = 69.45 ms; 9 requests wait: x 10 = 694.5 ms.
            // Memory to spare: loading all (400 ms) beats recomputing.
            assertThat(decide(costs, 4, 0, new Contention(9, false, STEP_TOKENS, Integer.MAX_VALUE))).as("seed %d", seed).isEqualTo(4);
            // 8 free blocks: loading all parks 4 for 400 ms, while the steps fill 22 blocks; the
            // recompute fills the 4 in 69 ms (3.8 filled, under the 4 spare): 4 blocks preempted,
            // +694.5 ms. Loading the first chunk parks 1 block for 100 ms (5.5 filled, 7 spare):
            // 100 + 10 x 52.6 = 626 ms, the cheapest.
            assertThat(decide(costs, 4, 0, new Contention(9, false, STEP_TOKENS, 8))).as("seed %d", seed).isEqualTo(1);
            // 4 free blocks, none spare: a recompute's 69 ms preempts 3.84 blocks too, the load
            // only 0.16 more (+28 ms): 428 ms against 694.5, load all.
            assertThat(decide(costs, 4, 0, new Contention(9, false, STEP_TOKENS, 4))).as("seed %d", seed).isEqualTo(4);
        }
    }

    @Test
    void nothingMeasuredLoadsAndNeverRecomputesEverything() {
        LoadCosts costs = new LoadCosts(BLOCK);
        assertThat(decide(costs, 3, 0, Contention.idle(STEP_TOKENS))).isEqualTo(3);
        OffloadStats stats = new OffloadStats();
        OffloadScheduler.Lookup out = costs.decide(LoadPolicy.NEVER, new OffloadScheduler.Lookup.Hit(HostTier.NAME, 3), 0, 1,
                BLOCK, Map.of(), Contention.idle(STEP_TOKENS), stats);
        assertThat(out).isInstanceOf(OffloadScheduler.Lookup.Miss.class);
        assertThat(stats.loadDecisions().decided()).isEqualTo(1);
        assertThat(stats.loadDecisions().recomputed()).isEqualTo(1);
        assertThat(stats.loadDecisions().tokensRecomputed()).isEqualTo(3L * BLOCK);
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

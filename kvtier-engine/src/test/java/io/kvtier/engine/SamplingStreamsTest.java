package io.kvtier.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.kv.ExtraKeys;
import io.kvtier.model.Checkpoint;
import io.kvtier.model.Kernels;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Issue 14 item 1: every (seed, request id) draws its own stream; negative seeds sample normally. */
class SamplingStreamsTest {

    private static SplittableRandom stream(long seed, long id) {
        return new Request(id, new int[] {1}, 1, new SamplingParams(1f, 1f, seed), ExtraKeys.NONE).rng();
    }

    private static double[][] firstDraws(long fromSeed, int seeds, long id, int draws) {
        double[][] d = new double[seeds][draws];
        for (int s = 0; s < seeds; s++) {
            SplittableRandom r = stream(fromSeed + s, id);
            for (int k = 0; k < draws; k++) {
                d[s][k] = r.nextDouble();
            }
        }
        return d;
    }

    /** Pearson correlation of x and y. */
    private static double correlation(double[] x, double[] y) {
        double mx = 0, my = 0;
        for (int i = 0; i < x.length; i++) {
            mx += x[i];
            my += y[i];
        }
        mx /= x.length;
        my /= y.length;
        double sxy = 0, sxx = 0, syy = 0;
        for (int i = 0; i < x.length; i++) {
            sxy += (x[i] - mx) * (y[i] - my);
            sxx += (x[i] - mx) * (x[i] - mx);
            syy += (y[i] - my) * (y[i] - my);
        }
        return sxy / Math.sqrt(sxx * syy);
    }

    @Test
    void adjacentSeedsAreUncorrelatedAtEveryLag() {
        int n = 10_000; // seeds -5000..4999: the standard error of a correlation is 0.01
        for (long id : new long[] {0, 7}) {
            double[][] d = firstDraws(-5_000, n + 1, id, 6);
            for (int lag = 0; lag <= 4; lag++) {
                double[] x = new double[n];
                double[] y = new double[n];
                for (int s = 0; s < n; s++) {
                    x[s] = d[s][lag];     // draw 'lag' of seed s
                    y[s] = d[s + 1][0];   // first draw of seed s + 1
                }
                assertThat(Math.abs(correlation(x, y))).as("id %d, seed s draw %d vs seed s+1 draw 0", id, lag)
                        .isLessThan(0.05);
            }
        }
    }

    @Test
    void adjacentRequestIdsAreUncorrelated() {
        int n = 10_000;
        for (int lag = 0; lag <= 4; lag++) {
            double[] x = new double[n];
            double[] y = new double[n];
            for (int i = 0; i < n; i++) {
                SplittableRandom a = stream(42, i);
                for (int k = 0; k < lag; k++) {
                    a.nextDouble();
                }
                x[i] = a.nextDouble();
                y[i] = stream(42, i + 1).nextDouble();
            }
            assertThat(Math.abs(correlation(x, y))).as("id i draw %d vs id i+1 draw 0", lag).isLessThan(0.05);
        }
    }

    @Test
    void noStreamIsAShiftOfAnother() {
        // 2001 seeds (negatives included) x 4 ids x 16 draws: 128,064 longs, all distinct unless streams overlap.
        Map<Long, String> seen = new HashMap<>();
        for (long seed = -1_000; seed <= 1_000; seed++) {
            for (long id = 0; id < 4; id++) {
                SplittableRandom r = stream(seed, id);
                for (int k = 0; k < 16; k++) {
                    String where = "seed " + seed + " id " + id + " draw " + k;
                    String before = seen.put(r.nextLong(), where);
                    assertThat(before).as("%s repeats a draw", where).isNull();
                }
            }
        }
    }

    @Test
    void sameSeedAndIdGiveTheSameStream() {
        SplittableRandom a = stream(-3, 5);
        SplittableRandom b = stream(-3, 5);
        for (int k = 0; k < 100; k++) {
            assertThat(a.nextLong()).isEqualTo(b.nextLong());
        }
    }

    @Test
    void aRequestsOwnSeedGivesOneStreamWhateverTheIdAndDiffersFromTheRunSeedStream() {
        SplittableRandom first = new Request(3, new int[] {1}, 1, SamplingParams.withOwnSeed(1f, 1f, 7), ExtraKeys.NONE).rng();
        SplittableRandom later = new Request(918, new int[] {1}, 1, SamplingParams.withOwnSeed(1f, 1f, 7), ExtraKeys.NONE).rng();
        long[] a = new long[100];
        for (int k = 0; k < a.length; k++) {
            a[k] = first.nextLong();
            assertThat(later.nextLong()).as("draw %d", k).isEqualTo(a[k]);
        }
        // The same number as a run's seed (mixed with the id) names other streams.
        for (long id : new long[] {0, 3, 918}) {
            assertThat(stream(7, id).nextLong()).as("run seed 7, id %d", id).isNotEqualTo(a[0]);
        }
    }

    @Test
    void aSeededRequestRepeatsItsTokensOnTheRealModelWhateverRanBeforeIt() {
        int[] prompt = ReferenceRecords.load().get(0).promptIds();
        EngineConfig config = new EngineConfig(16, 64, 512, EngineConfig.DEFAULT_MAX_RUNNING, true, 1);
        try (Engine e = LlamaRunner.engine(Checkpoint.load(ReferenceRecords.model()), config, Kernels.best(), 1)) {
            e.submit(new Request(0, prompt, 24, SamplingParams.withOwnSeed(1f, 1f, 7), ExtraKeys.NONE));
            int[] first = e.runToCompletion().getFirst().outputIds();
            e.submit(new Request(1, prompt, 24, new SamplingParams(1f, 1f, 7), ExtraKeys.NONE));
            e.runToCompletion();
            e.submit(new Request(2, prompt, 24, SamplingParams.withOwnSeed(1f, 1f, 7), ExtraKeys.NONE));
            int[] again = e.runToCompletion().getFirst().outputIds();
            assertThat(again).hasSize(24).isEqualTo(first);
        }
    }

    @Test
    void negativeSeedsSampleNormallyOnTheRealModel() {
        // Before the fix, seed -k reached the generator state 0 at its k-th draw: a draw of exactly 0.0,
        // which picks token 0 (<unk>) whatever the logits. At T = 0.3 the model never gives <unk> itself.
        int[] prompt = ReferenceRecords.load().get(0).promptIds();
        EngineConfig config = new EngineConfig(16, 64, 512, EngineConfig.DEFAULT_MAX_RUNNING, true, 1);
        try (Engine e = LlamaRunner.engine(Checkpoint.load(ReferenceRecords.model()), config, Kernels.best(), 1)) {
            for (int k = 1; k <= 16; k++) {
                e.submit(new Request(0, prompt, 16, new SamplingParams(0.3f, 1f, -k), ExtraKeys.NONE));
                Request r = e.runToCompletion().getFirst();
                assertThat(r.outputIds()).as("seed %d", -k).doesNotContain(0).isNotEmpty();
            }
        }
    }
}

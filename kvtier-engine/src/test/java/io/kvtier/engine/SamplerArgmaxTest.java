package io.kvtier.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SamplerArgmaxTest {

    /** Values with many ties, both zeros, infinities and (when {@code nan}) NaNs, so every rule shows. */
    private static float[] logits(SplittableRandom rng, int n, boolean nan) {
        float[] pool = {-0.0f, 0.0f, 1.5f, 1.5f, -3f, 7f, Float.NEGATIVE_INFINITY, Float.POSITIVE_INFINITY};
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = rng.nextInt(3) == 0 ? pool[rng.nextInt(pool.length - 1)] : (float) rng.nextGaussian();
            if (nan && rng.nextInt(50) == 0) {
                x[i] = Float.NaN;
            }
        }
        if (rng.nextInt(4) == 0 && n > 0) {
            x[rng.nextInt(n)] = Float.POSITIVE_INFINITY;
        }
        return x;
    }

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3, 42, 20261205})
    void theVectorArgmaxIsTheScalarOnesOnEveryInput(long seed) {
        SplittableRandom rng = new SplittableRandom(seed);
        for (int trial = 0; trial < 2000; trial++) {
            int n = trial % 10 == 0 ? 32000 + rng.nextInt(100) : rng.nextInt(200);
            float[] x = logits(rng, n, trial % 3 == 0);
            assertThat(Sampler.argmax(x)).as("seed %d, trial %d, %d logits", seed, trial, n)
                    .isEqualTo(Sampler.argmaxScalar(x));
        }
    }

    @Test
    void theLowestIdWinsTiesAndTheRulesAtTheEdges() {
        float[] ties = new float[100];
        ties[37] = 5f;
        ties[90] = 5f;
        assertThat(Sampler.argmax(ties)).isEqualTo(37);
        float[] zeros = new float[64];
        java.util.Arrays.fill(zeros, Float.NEGATIVE_INFINITY);
        zeros[40] = -0.0f;
        zeros[41] = 0.0f;
        assertThat(Sampler.argmax(zeros)).isEqualTo(40);
        float[] allNegInf = new float[64];
        java.util.Arrays.fill(allNegInf, Float.NEGATIVE_INFINITY);
        assertThat(Sampler.argmax(allNegInf)).isZero();
        float[] nanFirst = new float[64];
        nanFirst[0] = Float.NaN;
        nanFirst[10] = 9f;
        assertThat(Sampler.argmax(nanFirst)).isZero(); // llama2.c's loop never leaves a NaN at id 0
        assertThat(Sampler.argmax(new float[0])).isZero();
        assertThat(Sampler.argmax(new float[] {1f, 3f, 2f})).isEqualTo(1);
    }
}

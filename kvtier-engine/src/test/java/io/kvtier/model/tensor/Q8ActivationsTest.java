package io.kvtier.model.tensor;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link Q8Activations#quantize} (vectors) against a scalar reference written from its contract
 * ({@code quantize_row_q8_0}, then the kernels' layouts): every quant, scale, pair, adjacent pair and
 * offset the same, on rows with ties, exact maxima, zero blocks and tiny and huge magnitudes. Runs at
 * the default vector width and at 256 bits (the pom's kernels-256 execution).
 */
class Q8ActivationsTest {

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8})
    void vectorQuantizationEqualsTheScalarReference(long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        int cols = 32 * (1 + rnd.nextInt(24));
        int rows = 1 + rnd.nextInt(4);
        float[] x = new float[rows * cols];
        for (int i = 0; i < x.length; i++) {
            x[i] = switch (rnd.nextInt(8)) {
                case 0 -> 0f;
                case 1 -> (rnd.nextInt(255) - 127) * 0.5f;       // halves: ties when the scale is 1
                case 2 -> (float) rnd.nextGaussian() * 1e-30f;    // tiny: the half scale underflows
                case 3 -> (float) rnd.nextGaussian() * 1e6f;
                default -> (float) rnd.nextGaussian();
            };
        }
        for (int b = 0; b < x.length / 32; b += 5) {
            java.util.Arrays.fill(x, 32 * b, 32 * b + 32, 0f);   // whole zero blocks
        }
        Q8Activations q = new Q8Activations();
        q.quantize(x, rows, cols);
        Reference ref = new Reference(x, rows, cols);
        for (int r = 0; r < rows; r++) {
            for (int j = 0; j < cols; j++) {
                assertThat(q.quant(r, j)).as("seed %d row %d quant %d", seed, r, j).isEqualTo(ref.q[r * cols + j]);
            }
            for (int b = 0; b < cols / 32; b++) {
                assertThat(q.scale(r, b)).as("seed %d row %d scale %d", seed, r, b).isEqualTo(ref.d[r * cols / 32 + b]);
                assertThat(q.offsets(r, b)).as("seed %d row %d offsets %d", seed, r, b).isEqualTo(ref.offsets[r][b]);
                assertThat(q.scales[r][b]).isEqualTo(ref.d[r * cols / 32 + b]);
            }
            for (int k = 0; k < cols / 2; k++) {
                assertThat(q.pairs(r, k)).as("seed %d row %d pair %d", seed, r, k).isEqualTo(ref.pairs[r][k]);
                assertThat(q.adjacent[r][k]).as("seed %d row %d adjacent %d", seed, r, k).isEqualTo(ref.adjacent[r][k]);
            }
        }
    }

    /** The contract, one value at a time. */
    private static final class Reference {
        final short[] q;
        final float[] d;
        final int[][] pairs;
        final int[][] adjacent;
        final int[][] offsets;

        Reference(float[] x, int rows, int cols) {
            q = new short[rows * cols];
            d = new float[rows * cols / 32];
            pairs = new int[rows][cols / 2];
            adjacent = new int[rows][cols / 2];
            offsets = new int[rows][cols / 32];
            for (int b = 0; b < rows * cols / 32; b++) {
                int o = 32 * b;
                float amax = 0;
                for (int j = 0; j < 32; j++) {
                    amax = Math.max(amax, Math.abs(x[o + j]));
                }
                d[b] = Float.float16ToFloat(Float.floatToFloat16(amax / 127f));
                float id = amax != 0 ? 127f / amax : 0f;
                for (int j = 0; j < 32; j++) {
                    q[o + j] = (short) Math.rint(x[o + j] * id);
                }
                int row = b / (cols / 32);
                int rb = b % (cols / 32);
                int low = 0;
                int high = 0;
                for (int m = 0; m < 4; m++) {
                    for (int t = 0; t < 4; t++) {
                        pairs[row][16 * rb + 4 * m + t] = (q[o + 8 * m + t] & 0xFFFF) | (q[o + 8 * m + 4 + t] << 16);
                        low += q[o + 8 * m + t];
                        high += q[o + 8 * m + 4 + t];
                    }
                }
                offsets[row][rb] = (-8 * low & 0xFFFF) | (-8 * high << 16);
                for (int j = 0; j < 16; j++) {
                    adjacent[row][16 * rb + j] = (q[o + 2 * j] & 0xFFFF) | (q[o + 2 * j + 1] << 16);
                }
            }
        }
    }
}

package io.kvtier.model.tensor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link Q4Interleaved}: the in-place repacking (every row decoded from the new layout equals
 * {@link ScalarDequant}'s row of the original, bit for bit) and the decode kernel against a scalar
 * reference of the same arithmetic (llama.cpp's {@code ggml_vec_dot_q4_0_q8_0}: per block the
 * exact integer {@code sum (q_w - 8) q_x}, then {@code fma(sum, d_w * d_x, acc)} block after
 * block): equal bits, for 1 to 3 activation rows, over ranges that cut the groups anywhere, with
 * nothing written outside the range. Runs at the CPU's width and at 256 bits (surefire execution
 * {@code kernels-256}: groups of 8 rows instead of 16).
 */
class Q4InterleavedTest {

    private static final int G = Q4Interleaved.GROUP;

    /** A random row-major Q4_0 matrix: random scales (some tiny, some zero), extreme quants in every fifth block. */
    private static MemorySegment randomQ4(Random rnd, int rows, int cols) {
        ByteBuffer w = BlockPacker.le(18 * rows * cols / 32);
        for (int b = 0; b < rows * cols / 32; b++) {
            int[] q = new int[32];
            for (int j = 0; j < 32; j++) {
                q[j] = b % 5 == 4 ? (j % 2 == 0 ? 15 : 0) : rnd.nextInt(16);
            }
            float d = switch (b % 7) {
                case 3 -> 0f;
                case 5 -> 1e-6f;   // a half subnormal
                case 6 -> b % 2 == 0 ? -65504f : 65504f;   // the largest finite halves
                default -> (float) rnd.nextGaussian();
            };
            BlockPacker.q4_0(w, d, q);
        }
        return MemorySegment.ofArray(Arrays.copyOf(w.array(), w.position()));
    }

    private static float[] dequantized(MemorySegment rowMajor, int rows, int cols) {
        float[] out = new float[rows * cols];
        ScalarDequant.dequantize(TensorType.Q4_0, rowMajor, 0, out, 0, rows * cols);
        return out;
    }

    @ParameterizedTest
    @ValueSource(ints = {32, 96, 288, 768})
    void repackedRowsDecodeToTheOriginalValues(int cols) {
        int rows = 3 * G;
        MemorySegment w = randomQ4(new Random(cols), rows, cols);
        float[] want = dequantized(w, rows, cols);
        MemorySegment packed = MemorySegment.ofArray(w.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
        Q4Interleaved.repackInPlace(packed, rows, cols);
        assertThat(packed.mismatch(w)).as("the layout changed the bytes").isGreaterThanOrEqualTo(0);
        Weight wt = new Weight(TensorType.Q4_0, packed, rows, cols, true);
        float[] got = new float[rows * cols];
        for (int r = 0; r < rows; r++) {
            QuantMatmul.row(wt, r, got, r * cols);
        }
        for (int i = 0; i < want.length; i++) {
            assertThat(Float.floatToRawIntBits(got[i])).as("value %d", i).isEqualTo(Float.floatToRawIntBits(want[i]));
        }
    }

    /** The scalar reference: per block the exact integer sum, then one fma with {@code d_w * d_x}. */
    private static float reference(MemorySegment rowMajor, int r, int cols, Q8Activations x, int i) {
        long rowBytes = 18L * cols / 32;
        float acc = 0f;
        for (int b = 0; b < cols / 32; b++) {
            long p = r * rowBytes + 18L * b;
            int sum = 0;
            for (int j = 0; j < 32; j++) {
                int q = rowMajor.get(java.lang.foreign.ValueLayout.JAVA_BYTE, p + 2 + (j & 15)) & 0xFF;
                sum += ((j < 16 ? q & 0xF : q >> 4) - 8) * x.quant(i, 32 * b + j);
            }
            float dw = ScalarDequant.f16(rowMajor, p);
            acc = Math.fma((float) sum, dw * x.scale(i, b), acc);
        }
        return acc;
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 9, 24, 64})
    void kernelEqualsTheScalarReferenceOnEveryRange(int blocks) {
        int cols = 32 * blocks;
        int rows = 4 * G;
        Random rnd = new Random(7000 + blocks);
        MemorySegment w = randomQ4(rnd, rows, cols);
        int n = 3;
        float[] x = new float[n * cols];
        for (int k = 0; k < x.length; k++) x[k] = (float) (rnd.nextGaussian() * (k % 96 < 32 ? 1 : 1e-3));
        Q8Activations xa = new Q8Activations();
        xa.quantize(x, n, cols);
        float[] want = new float[n * rows];
        for (int i = 0; i < n; i++) {
            for (int r = 0; r < rows; r++) {
                want[i * rows + r] = reference(w, r, cols, xa, i);
            }
        }
        MemorySegment packed = MemorySegment.ofArray(w.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
        Q4Interleaved.repackInPlace(packed, rows, cols);
        Weight wt = new Weight(TensorType.Q4_0, packed, rows, cols, true);
        int[][] ranges = {{0, rows}, {0, G}, {G, 3 * G}, {3, G + 5}, {G - 1, G + 1}, {5, 6}, {rows - 3, rows}};
        for (int nx = 1; nx <= n; nx++) {
            for (int[] range : ranges) {
                float[] y = new float[nx * rows];
                Arrays.fill(y, Float.NaN);
                QuantMatmul.matmul(wt, xa, nx, y, range[0], range[1]);
                for (int i = 0; i < nx; i++) {
                    for (int r = 0; r < rows; r++) {
                        String at = "n " + nx + " range " + Arrays.toString(range) + " x " + i + " row " + r;
                        if (r >= range[0] && r < range[1]) {
                            assertThat(Float.floatToRawIntBits(y[i * rows + r])).as(at)
                                    .isEqualTo(Float.floatToRawIntBits(want[i * rows + r]));
                        } else {
                            assertThat(y[i * rows + r]).as(at + " (outside the range)").isNaN();
                        }
                    }
                }
            }
        }
    }

    /**
     * The largest short sums the paired lanes hold: quants 15 (and 0) against activation quants
     * 127 (and -127) in every value. A lane starts at its block's {@code - 8} offset (-16256 or
     * +16256) and adds 16 products of up to 1905 (so its partial sums pass a short's range and
     * wrap); it ends at {@code sum (q - 8) x}: 7 * 127 * 16 = 14224 for the quants 15, and
     * -8 * -127 * 16 = 16256, the largest, for the quants 0 against -127, whose row's two lanes
     * add to 32512, the largest the 3-operation fold meets. The kernel equals the scalar
     * reference bit for bit, for each group row and each sign.
     */
    @Test
    void extremeBlocksSumExactlyInPairedLanes() {
        int cols = 4 * 32;
        int rows = 2 * G;
        ByteBuffer b = BlockPacker.le(18 * rows * cols / 32);
        for (int r = 0; r < rows; r++) {
            for (int k = 0; k < cols / 32; k++) {
                int[] q = new int[32];
                Arrays.fill(q, (r + k) % 2 == 0 ? 15 : 0);
                BlockPacker.q4_0(b, r % 3 == 0 ? 0.5f : 1.25f, q);
            }
        }
        MemorySegment w = MemorySegment.ofArray(Arrays.copyOf(b.array(), b.position()));
        float[] x = new float[2 * cols];
        for (int k = 0; k < x.length; k++) {
            x[k] = (k / 32) % 2 == 0 ? 3f : -3f;   // every quant 127 or -127, row 1 the same
        }
        Q8Activations xa = new Q8Activations();
        xa.quantize(x, 2, cols);
        assertThat(xa.quant(0, 0)).isEqualTo(127);
        assertThat(xa.quant(1, 32)).isEqualTo(-127);
        float[] want = new float[2 * rows];
        for (int i = 0; i < 2; i++) {
            for (int r = 0; r < rows; r++) {
                want[i * rows + r] = reference(w, r, cols, xa, i);
            }
        }
        // the sums are exact integers times the scales: e.g. row 0 block 0, (15 - 8) * 127 * 32 = 28448
        // (and (0 - 8) * -127 * 32 = 32512 in the blocks of quants 0)
        double row0 = 0.5 * (28448.0 * xa.scale(0, 0) + 32512.0 * xa.scale(0, 1) + 28448.0 * xa.scale(0, 2) + 32512.0 * xa.scale(0, 3));
        assertThat((double) want[0]).isCloseTo(row0, org.assertj.core.data.Offset.offset(1e-5 * row0));
        MemorySegment packed = MemorySegment.ofArray(w.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
        Q4Interleaved.repackInPlace(packed, rows, cols);
        float[] y = new float[2 * rows];
        QuantMatmul.matmul(new Weight(TensorType.Q4_0, packed, rows, cols, true), xa, 2, y, 0, rows);
        for (int k = 0; k < y.length; k++) {
            assertThat(Float.floatToRawIntBits(y[k])).as("output %d", k).isEqualTo(Float.floatToRawIntBits(want[k]));
        }
    }

    /** The {@code - 8} offsets the kernel's short lanes start at: -8 times the sums of the 16 quants each half of a paired lane meets. */
    @Test
    void offsetsHoldMinus8TimesTheSumsEachLaneHalfMeets() {
        int cols = 96;
        float[] x = new float[2 * cols];
        for (int k = 0; k < x.length; k++) x[k] = (k * 37 % 11) - 5.5f + k / 300f;
        Q8Activations xa = new Q8Activations();
        xa.quantize(x, 2, cols);
        boolean negative = false;
        for (int row = 0; row < 2; row++) {
            for (int b = 0; b < cols / 32; b++) {
                int low = 0, high = 0;
                for (int m = 0; m < 4; m++) {
                    for (int t = 0; t < 4; t++) {
                        low += xa.quant(row, 32 * b + 8 * m + t);
                        high += xa.quant(row, 32 * b + 8 * m + 4 + t);
                    }
                }
                int off = xa.offsets(row, b);
                assertThat((int) (short) off).as("row %d block %d low", row, b).isEqualTo(-8 * low);
                assertThat(off >> 16).as("row %d block %d high", row, b).isEqualTo(-8 * high);
                negative |= (short) off < 0 || off < 0;
            }
        }
        assertThat(negative).as("some offset negative").isTrue();
    }

    /**
     * The repacked kernels convert scales for finite halves only, so a matrix with an infinite or
     * NaN scale is refused (and left untouched); the model keeps such a matrix in its file layout.
     */
    @Test
    void matricesWithInfiniteOrNaNScalesAreNotRepacked() {
        int rows = G, cols = 64;
        for (short bad : new short[] {(short) 0x7C00, (short) 0xFC00, (short) 0x7E00}) {
            MemorySegment w = randomQ4(new Random(3), rows, cols);
            assertThat(Q4Interleaved.finiteScales(w, rows, cols)).isTrue();
            w.set(java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN), 18L * 5, bad);
            byte[] before = w.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
            assertThat(Q4Interleaved.finiteScales(w, rows, cols)).as("scale %04x", bad).isFalse();
            assertThatThrownBy(() -> Q4Interleaved.repackInPlace(w, rows, cols)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("infinite or NaN scale");
            assertThat(w.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE)).isEqualTo(before);
        }
    }

    /** The pair ints the paired lanes broadcast: value {@code 32b + 8m + t} low, {@code 32b + 8m + 4 + t} high. */
    @Test
    void activationPairsHoldTheValuesOfAdjacentLanes() {
        int cols = 64;
        float[] x = new float[2 * cols];
        for (int k = 0; k < x.length; k++) x[k] = k % 7 - 3.5f + k / 100f;
        Q8Activations xa = new Q8Activations();
        xa.quantize(x, 2, cols);
        boolean negativeHigh = false;
        for (int row = 0; row < 2; row++) {
            for (int b = 0; b < cols / 32; b++) {
                for (int m = 0; m < 4; m++) {
                    for (int t = 0; t < 4; t++) {
                        int pair = xa.pairs(row, 16 * b + 4 * m + t);
                        assertThat((int) (short) pair).isEqualTo(xa.quant(row, 32 * b + 8 * m + t));
                        assertThat(pair >> 16).isEqualTo(xa.quant(row, 32 * b + 8 * m + 4 + t));
                        negativeHigh |= pair < 0;
                    }
                }
            }
        }
        assertThat(negativeHigh).as("some high half negative").isTrue();
    }

    /**
     * The float32-activation product (prefill, batches, {@code kvtier.quant.activations=f32}):
     * the decoded group tile equals {@link ScalarDequant}'s values bit for bit, and every product
     * over ranges that cut the groups is within {@code 2e-6 * sum |w x|} of the double-precision
     * dot product, nothing written outside the range, for 1 to 32 activation rows ({@link Q4InterleavedTiles}).
     */
    @ParameterizedTest
    @ValueSource(ints = {1, 3, 9, 24})
    void floatActivationProductMatchesTheDequantizedDotProduct(int blocks) {
        int cols = 32 * blocks;
        int rows = 3 * G;
        Random rnd = new Random(9000 + blocks);
        MemorySegment w = randomQ4(rnd, rows, cols);
        float[] deq = dequantized(w, rows, cols);
        MemorySegment packed = MemorySegment.ofArray(w.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
        Q4Interleaved.repackInPlace(packed, rows, cols);
        float[] tile = new float[cols * G + 5];
        Q4InterleavedTiles.decodeGroup(packed, (long) 18 * G * blocks, blocks, tile, 5);   // group 1, at an offset
        for (int c = 0; c < cols; c++) {
            for (int r = 0; r < G; r++) {
                assertThat(Float.floatToRawIntBits(tile[5 + c * G + r])).as("col %d row %d", c, G + r)
                        .isEqualTo(Float.floatToRawIntBits(deq[(G + r) * cols + c]));
            }
        }
        Weight wt = new Weight(TensorType.Q4_0, packed, rows, cols, true);
        // n: below, at and around the kernels' 8 activation rows per pass; ranges: whole and cut groups, pairs and a single group
        for (int n : new int[] {1, 2, 5, 8, 9, 17, 32}) {
            float[] x = new float[n * cols];
            for (int k = 0; k < x.length; k++) x[k] = (float) rnd.nextGaussian();
            for (int[] range : new int[][] {{0, rows}, {3, G + 5}, {G, 2 * G}, {rows - 1, rows}, {G, rows}, {1, rows},
                    {0, 2 * G - 1}, {G + 2, rows - 3}}) {
                float[] y = new float[n * rows];
                Arrays.fill(y, Float.NaN);
                QuantMatmul.matmul(wt, x, n, y, range[0], range[1]);
                for (int i = 0; i < n; i++) {
                    for (int r = 0; r < rows; r++) {
                        String at = "n " + n + " range " + Arrays.toString(range) + " x " + i + " row " + r;
                        if (r < range[0] || r >= range[1]) {
                            assertThat(y[i * rows + r]).as(at + " (outside the range)").isNaN();
                            continue;
                        }
                        double dot = 0;
                        double mag = 0;
                        for (int c = 0; c < cols; c++) {
                            dot += (double) deq[r * cols + c] * x[i * cols + c];
                            mag += Math.abs((double) deq[r * cols + c] * x[i * cols + c]);
                        }
                        assertThat((double) y[i * rows + r]).as(at)
                                .isCloseTo(dot, org.assertj.core.data.Offset.offset(2e-6 * mag + 1e-30));
                    }
                }
            }
        }
    }

    /**
     * A thread split or a batch size never changes a row's value ({@link Q4InterleavedTiles}
     * sums every output the same way): each output of a product over a range or over a subset of
     * the activation rows has the bits of the whole product's, for pairs of groups, a single
     * group, cut groups and a last pass of fewer than 8 activation rows.
     */
    @Test
    void floatProductBitsDoNotDependOnTheRangeOrTheBatch() {
        int cols = 96;
        int rows = 5 * G;
        Random rnd = new Random(11);
        MemorySegment packed = randomQ4(rnd, rows, cols);
        Q4Interleaved.repackInPlace(packed, rows, cols);
        Weight wt = new Weight(TensorType.Q4_0, packed, rows, cols, true);
        int n = 11;
        float[] x = new float[n * cols];
        for (int k = 0; k < x.length; k++) x[k] = (float) rnd.nextGaussian();
        float[] whole = new float[n * rows];
        QuantMatmul.matmul(wt, x, n, whole, 0, rows);
        for (int[] range : new int[][] {{G, rows}, {2 * G, 3 * G}, {7, 4 * G + 3}, {3 * G + 1, rows}}) {
            for (int nx : new int[] {1, 3, 8, 11}) {
                int skip = n - nx;   // the last nx activation rows
                float[] x2 = Arrays.copyOfRange(x, skip * cols, n * cols);
                float[] y = new float[nx * rows];
                QuantMatmul.matmul(wt, x2, nx, y, range[0], range[1]);
                for (int i = 0; i < nx; i++) {
                    for (int r = range[0]; r < range[1]; r++) {
                        assertThat(Float.floatToRawIntBits(y[i * rows + r]))
                                .as("range %s, %d rows, x %d row %d", Arrays.toString(range), nx, i, r)
                                .isEqualTo(Float.floatToRawIntBits(whole[(skip + i) * rows + r]));
                    }
                }
            }
        }
    }

    /**
     * Unit scales and activations of +-127 (scale 1): the short half-block sums reach their bound
     * (16 x 15 x 127 = 30480) and the result is the exact integer {@code sum (q - 8) x}.
     */
    @Test
    void extremeBlocksGiveTheExactIntegerSum() {
        int cols = 96;
        int rows = G;
        ByteBuffer w = BlockPacker.le(18 * rows * cols / 32);
        float[] x = new float[cols];
        for (int j = 0; j < cols; j++) x[j] = j < 64 ? 127f : (j % 2 == 0 ? -127f : 127f);
        long[] want = new long[rows];
        for (int r = 0; r < rows; r++) {
            for (int b = 0; b < cols / 32; b++) {
                int[] q = new int[32];
                for (int j = 0; j < 32; j++) {
                    q[j] = r % 2 == 0 ? 15 : (b == 1 ? 0 : (j + r) % 16);
                    want[r] += (long) (q[j] - 8) * (long) x[32 * b + j];
                }
                BlockPacker.q4_0(w, 1f, q);
            }
        }
        MemorySegment s = MemorySegment.ofArray(Arrays.copyOf(w.array(), w.position()));
        Q4Interleaved.repackInPlace(s, rows, cols);
        Q8Activations xa = new Q8Activations();
        xa.quantize(x, 1, cols);
        float[] y = new float[rows];
        QuantMatmul.matmul(new Weight(TensorType.Q4_0, s, rows, cols, true), xa, 1, y, 0, rows);
        for (int r = 0; r < rows; r++) {
            assertThat(y[r]).as("row %d", r).isEqualTo((float) want[r]);
        }
        assertThat(want[0]).isEqualTo(7L * 127 * 64);   // 64 values of 15 - 8 = 7 against 127; the third block cancels
    }

    @Test
    void onlyWholeGroupsOfQ4_0RowsAreInterleaved() {
        assertThat(Q4Interleaved.fits(2 * G, 64)).isTrue();
        assertThat(Q4Interleaved.fits(2 * G + 4, 64)).isFalse();
        MemorySegment q8 = MemorySegment.ofArray(new byte[34 * G]);
        assertThatThrownBy(() -> new Weight(TensorType.Q8_0, q8, G, 32, true))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cannot interleave a Q8_0");
        MemorySegment q4 = MemorySegment.ofArray(new byte[18 * (G + 4)]);
        assertThatThrownBy(() -> Q4Interleaved.repackInPlace(q4, G + 4, 32)).isInstanceOf(IllegalArgumentException.class);
        Weight wt = new Weight(TensorType.Q4_0, MemorySegment.ofArray(new byte[18 * G]), G, 32, true);
        assertThat(wt.rowGroup()).isEqualTo(G);
        assertThat(new Weight(TensorType.Q4_0, MemorySegment.ofArray(new byte[18 * G]), G, 32).rowGroup()).isEqualTo(1);
        assertThatThrownBy(() -> wt.rowOffset(1)).isInstanceOf(IllegalStateException.class);
        assertThat(QuantMatmul.int8(wt)).isTrue();
    }
}

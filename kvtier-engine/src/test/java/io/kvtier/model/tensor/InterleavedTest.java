package io.kvtier.model.tensor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Random;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link Interleaved}, for both layouts (Q4_0: {@link Q4Interleaved}, Q8_0: {@link Q8Interleaved}):
 * the in-place repacking (every row decoded from the new layout equals {@link ScalarDequant}'s row
 * of the original, bit for bit), the decode kernel against a scalar reference of llama.cpp's
 * arithmetic and order ({@link #reference}): equal bits, for 1 to 3 activation rows,
 * over ranges that cut the groups anywhere, with nothing written outside the range; the float
 * tiles of prefill and batches ({@link InterleavedTiles}). Runs at the CPU's width and at 256 bits
 * (surefire execution {@code kernels-256}: groups of 8 rows instead of 16).
 */
class InterleavedTest {

    private static final int G = Interleaved.GROUP;
    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /**
     * A random row-major matrix of {@code type}: random scales (some zero, some subnormal, the
     * largest finite halves), extreme quants in every fifth block (Q4_0 15 and 0, Q8_0 -128 and 127).
     */
    static MemorySegment random(TensorType type, Random rnd, int rows, int cols) {
        ByteBuffer w = BlockPacker.le((int) type.rowBytes(cols) * rows);
        boolean q4 = type == TensorType.Q4_0;
        for (int b = 0; b < rows * cols / 32; b++) {
            int[] q = new int[32];
            for (int j = 0; j < 32; j++) {
                boolean high = j % 2 == 0;
                q[j] = b % 5 == 4 ? (q4 ? (high ? 15 : 0) : (high ? 127 : -128)) : (q4 ? rnd.nextInt(16) : rnd.nextInt(256) - 128);
            }
            float d = switch (b % 7) {
                case 3 -> 0f;
                case 5 -> 1e-6f;   // a half subnormal
                case 6 -> b % 2 == 0 ? -65504f : 65504f;   // the largest finite halves
                default -> (float) rnd.nextGaussian();
            };
            if (q4) {
                BlockPacker.q4_0(w, d, q);
            } else {
                BlockPacker.q8_0(w, d, q);
            }
        }
        return MemorySegment.ofArray(Arrays.copyOf(w.array(), w.position()));
    }

    static float[] dequantized(TensorType type, MemorySegment rowMajor, int rows, int cols) {
        float[] out = new float[rows * cols];
        ScalarDequant.dequantize(type, rowMajor, 0, out, 0, rows * cols);
        return out;
    }

    private static MemorySegment repacked(TensorType type, MemorySegment rowMajor, int rows, int cols) {
        MemorySegment packed = MemorySegment.ofArray(rowMajor.toArray(ValueLayout.JAVA_BYTE));
        Interleaved.repackInPlace(type, packed, rows, cols);
        return packed;
    }

    /** The signed quant of value {@code j} (0..31) of the row-major block at byte {@code p} (Q4_0: {@code q - 8}). */
    private static int quant(TensorType type, MemorySegment rowMajor, long p, int j) {
        if (type == TensorType.Q8_0) {
            return rowMajor.get(ValueLayout.JAVA_BYTE, p + 2 + j);
        }
        int q = rowMajor.get(ValueLayout.JAVA_BYTE, p + 2 + (j & 15)) & 0xFF;
        return (j < 16 ? q & 0xF : q >> 4) - 8;
    }

    /**
     * The scalar reference, llama.cpp's order for each type. Q4_0 (its repacked
     * {@code ggml_gemv_q4_0_8x8_q8_0}): per block the exact integer sum, then one fma with
     * {@code d_w * d_x}, block after block. Q8_0 ({@code ggml_vec_dot_q8_0_q8_0}'s AVX2 form):
     * eight accumulators, accumulator {@code l} taking per block {@code fma(sum of values
     * 4l..4l+3, d_w * d_x, acc_l)}, added at the end as {@code hsum_float_8} does.
     */
    static float reference(TensorType type, MemorySegment rowMajor, int r, int cols, Q8Activations x, int i) {
        long rowBytes = type.rowBytes(cols);
        float acc = 0f;
        float[] lanes = new float[8];
        for (int b = 0; b < cols / 32; b++) {
            long p = r * rowBytes + (long) type.blockBytes() * b;
            float d = ScalarDequant.f16(rowMajor, p) * x.scale(i, b);
            int sum = 0;
            for (int j = 0; j < 32; j++) {
                sum += quant(type, rowMajor, p, j) * x.quant(i, 32 * b + j);
                if (type == TensorType.Q8_0 && j % 4 == 3) {
                    lanes[j / 4] = Math.fma((float) sum, d, lanes[j / 4]);
                    sum = 0;
                }
            }
            acc = Math.fma((float) sum, d, acc);
        }
        if (type == TensorType.Q8_0) {
            acc = ((lanes[0] + lanes[4]) + (lanes[2] + lanes[6])) + ((lanes[1] + lanes[5]) + (lanes[3] + lanes[7]));
        }
        return acc;
    }

    @ParameterizedTest
    @CsvSource({"Q4_0, 32", "Q4_0, 96", "Q4_0, 288", "Q4_0, 768", "Q8_0, 32", "Q8_0, 96", "Q8_0, 288", "Q8_0, 768"})
    void repackedRowsDecodeToTheOriginalValues(TensorType type, int cols) {
        int rows = 3 * G;
        MemorySegment w = random(type, new Random(cols), rows, cols);
        float[] want = dequantized(type, w, rows, cols);
        MemorySegment packed = repacked(type, w, rows, cols);
        assertThat(packed.mismatch(w)).as("the layout changed the bytes").isGreaterThanOrEqualTo(0);
        Weight wt = new Weight(type, packed, rows, cols, true);
        float[] got = new float[rows * cols];
        for (int r = 0; r < rows; r++) {
            QuantMatmul.row(wt, r, got, r * cols);
        }
        for (int i = 0; i < want.length; i++) {
            assertThat(Float.floatToRawIntBits(got[i])).as("value %d", i).isEqualTo(Float.floatToRawIntBits(want[i]));
        }
    }

    @ParameterizedTest
    @CsvSource({"Q4_0, 1", "Q4_0, 3", "Q4_0, 9", "Q4_0, 24", "Q4_0, 64", "Q8_0, 1", "Q8_0, 2", "Q8_0, 9", "Q8_0, 24",
        "Q8_0, 64"})
    void kernelEqualsTheScalarReferenceOnEveryRange(TensorType type, int blocks) {
        int cols = 32 * blocks;
        int rows = 4 * G;
        Random rnd = new Random(7000 + blocks);
        MemorySegment w = random(type, rnd, rows, cols);
        int n = 3;
        float[] x = new float[n * cols];
        for (int k = 0; k < x.length; k++) x[k] = (float) (rnd.nextGaussian() * (k % 96 < 32 ? 1 : 1e-3));
        Q8Activations xa = new Q8Activations();
        xa.quantize(x, n, cols);
        float[] want = new float[n * rows];
        for (int i = 0; i < n; i++) {
            for (int r = 0; r < rows; r++) {
                want[i * rows + r] = reference(type, w, r, cols, xa, i);
            }
        }
        Weight wt = new Weight(type, repacked(type, w, rows, cols), rows, cols, true);
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
     * Q8_0's largest sums: weights -128 against activation quants -127 in every value, so each
     * short lane holds two products of 16256 (32512, the most a short lane meets) and a row's two
     * lanes 65024, past a short: the kernel sign-extends each lane on its own. Rows alternate
     * -128 and 127 weights, activation blocks alternate +-127, so every sign meets every sign; the
     * outputs equal the exact integer sums {@code 32 * q_w * q_x} per block with unit scales.
     */
    @Test
    void q8ExtremeBlocksGiveTheExactIntegerSum() {
        int cols = 4 * 32;
        int rows = 2 * G;
        MemorySegment w = extremeQ8(rows, cols);
        float[] x = new float[cols];
        for (int k = 0; k < cols; k++) {
            x[k] = (k / 32) % 2 == 0 ? -127f : 127f;   // quants -127 and 127 with scale 1
        }
        Q8Activations xa = new Q8Activations();
        xa.quantize(x, 1, cols);
        assertThat(xa.quant(0, 0)).isEqualTo(-127);
        assertThat(xa.scale(0, 0)).isEqualTo(1f);
        float[] y = new float[rows];
        QuantMatmul.matmul(new Weight(TensorType.Q8_0, repacked(TensorType.Q8_0, w, rows, cols), rows, cols, true), xa, 1, y, 0, rows);
        for (int r = 0; r < rows; r++) {
            assertThat(y[r]).as("row %d", r).isEqualTo(0f);   // two blocks of +q*127*32 and two of -q*127*32 cancel
        }
        // one block alone: the largest sums, exactly
        MemorySegment one = extremeQ8(rows, 32);
        Q8Activations x1 = new Q8Activations();
        x1.quantize(Arrays.copyOf(x, 32), 1, 32);
        float[] y1 = new float[rows];
        QuantMatmul.matmul(new Weight(TensorType.Q8_0, repacked(TensorType.Q8_0, one, rows, 32), rows, 32, true), x1, 1, y1, 0, rows);
        for (int r = 0; r < rows; r++) {
            assertThat(y1[r]).as("row %d", r).isEqualTo(r % 2 == 0 ? 128f * 127 * 32 : -127f * 127 * 32);
        }
        assertThat(y1[0]).isEqualTo(520192f);   // 16 short lanes' pairs of 32512 into one int per row
    }

    /** A row-major Q8_0 matrix with unit scales, every weight -128 in even rows and 127 in odd ones. */
    private static MemorySegment extremeQ8(int rows, int cols) {
        ByteBuffer b = BlockPacker.le(34 * rows * cols / 32);
        for (int r = 0; r < rows; r++) {
            for (int k = 0; k < cols / 32; k++) {
                int[] q = new int[32];
                Arrays.fill(q, r % 2 == 0 ? -128 : 127);
                BlockPacker.q8_0(b, 1f, q);
            }
        }
        return MemorySegment.ofArray(Arrays.copyOf(b.array(), b.position()));
    }

    /**
     * The repacked kernels convert scales for finite halves only, so a matrix with an infinite or
     * NaN scale is refused (and left untouched); the model keeps such a matrix in its file layout.
     */
    @ParameterizedTest
    @EnumSource(names = {"Q4_0", "Q8_0"})
    void matricesWithInfiniteOrNaNScalesAreNotRepacked(TensorType type) {
        int rows = G, cols = 64;
        for (short bad : new short[] {(short) 0x7C00, (short) 0xFC00, (short) 0x7E00}) {
            MemorySegment w = random(type, new Random(3), rows, cols);
            assertThat(Interleaved.finiteScales(type, w, rows, cols)).isTrue();
            w.set(I16, (long) type.blockBytes() * 5, bad);
            byte[] before = w.toArray(ValueLayout.JAVA_BYTE);
            assertThat(Interleaved.finiteScales(type, w, rows, cols)).as("scale %04x", bad).isFalse();
            assertThatThrownBy(() -> Interleaved.repackInPlace(type, w, rows, cols)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("infinite or NaN scale");
            assertThat(w.toArray(ValueLayout.JAVA_BYTE)).isEqualTo(before);
        }
    }

    /**
     * The float32-activation product (prefill, batches): every product over ranges that cut the
     * groups is within {@code 2e-6 * sum |w x|} of the double-precision dot product of the
     * dequantized weights, nothing written outside the range, for 1 to 32 activation rows.
     */
    @ParameterizedTest
    @CsvSource({"Q4_0, 1", "Q4_0, 3", "Q4_0, 9", "Q4_0, 24", "Q8_0, 1", "Q8_0, 3", "Q8_0, 9", "Q8_0, 24"})
    void floatActivationProductMatchesTheDequantizedDotProduct(TensorType type, int blocks) {
        int cols = 32 * blocks;
        int rows = 3 * G;
        Random rnd = new Random(9000 + blocks);
        MemorySegment w = random(type, rnd, rows, cols);
        float[] deq = dequantized(type, w, rows, cols);
        MemorySegment packed = repacked(type, w, rows, cols);
        Weight wt = new Weight(type, packed, rows, cols, true);
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
                        assertThat((double) y[i * rows + r]).as(at).isCloseTo(dot, Offset.offset(2e-6 * mag + 1e-30));
                    }
                }
            }
        }
    }

    /** The decoded group tile of each layout equals {@link ScalarDequant}'s values bit for bit (group 1, at an offset). */
    @ParameterizedTest
    @CsvSource({"Q4_0, 1", "Q4_0, 9", "Q8_0, 1", "Q8_0, 9"})
    void groupTilesHoldTheDequantizedValues(TensorType type, int blocks) {
        int cols = 32 * blocks;
        int rows = 3 * G;
        MemorySegment w = random(type, new Random(500 + blocks), rows, cols);
        float[] deq = dequantized(type, w, rows, cols);
        MemorySegment packed = repacked(type, w, rows, cols);
        float[] tile = new float[cols * G + 5];
        long group1 = Interleaved.blockBytes(type) * blocks;
        if (type == TensorType.Q4_0) {
            Q4Interleaved.decodeGroup(packed, group1, blocks, tile, 5);
        } else {
            Q8Interleaved.decodeGroup(packed, group1, blocks, tile, 5);
        }
        for (int c = 0; c < cols; c++) {
            for (int r = 0; r < G; r++) {
                assertThat(Float.floatToRawIntBits(tile[5 + c * G + r])).as("col %d row %d", c, G + r)
                        .isEqualTo(Float.floatToRawIntBits(deq[(G + r) * cols + c]));
            }
        }
    }

    /**
     * A thread split or a batch size never changes a row's value ({@link InterleavedTiles}
     * sums every output the same way): each output of a product over a range or over a subset of
     * the activation rows has the bits of the whole product's, for pairs of groups, a single
     * group, cut groups and a last pass of fewer than 8 activation rows.
     */
    @ParameterizedTest
    @EnumSource(names = {"Q4_0", "Q8_0"})
    void floatProductBitsDoNotDependOnTheRangeOrTheBatch(TensorType type) {
        int cols = 96;
        int rows = 5 * G;
        Random rnd = new Random(11);
        MemorySegment packed = repacked(type, random(type, rnd, rows, cols), rows, cols);
        Weight wt = new Weight(type, packed, rows, cols, true);
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
}

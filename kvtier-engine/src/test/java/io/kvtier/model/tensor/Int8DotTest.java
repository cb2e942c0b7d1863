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
 * {@link Q8Activations} (llama.cpp's {@code quantize_row_q8_0}) on hand-chosen values, and
 * {@link Int8Dot} against a scalar reference of the same arithmetic: per block the exact integer
 * sum of {@code q_w * q_x} (in a long), times {@code d_w * d_x} (a float product, as llama.cpp),
 * summed in double. With unit scales every block sum is an integer below 2^24, so the kernel's
 * result must equal the reference exactly; with random scales it may differ only by float32
 * rounding in the lanes' scaled sums, within {@code 2e-6 * sum_b |d_b| * sum_j |q_w q_x|}. The build runs this class at the CPU's width and again at 256 bits
 * (surefire execution {@code kernels-256}).
 */
class Int8DotTest {

    private static MemorySegment seg(ByteBuffer b) {
        return MemorySegment.ofArray(Arrays.copyOf(b.array(), b.position()));
    }

    @Test
    void quantizationRoundsAsLlamaCpp() {
        float[] x = new float[96];
        // block 0: amax 127, so the scale is 1 and q = rint(x): ties go to even
        float[] b0 = {2.5f, 3.5f, -2.5f, -3.5f, 0.5f, -0.5f, 1.49f, 127f, -127f, 126.5f};
        System.arraycopy(b0, 0, x, 0, b0.length);
        // block 1: amax 1 (negative), so q = rint(x * 127)
        x[32] = -1f;
        x[33] = 0.5f;      // 63.5 -> 64
        x[34] = 0.25f;     // 31.75 -> 32
        x[35] = -0.0039370f;  // -0.49999 -> -0
        // block 2: all zero
        Q8Activations q = new Q8Activations();
        q.quantize(x, 1, 96);
        int[] want0 = {2, 4, -2, -4, 0, 0, 1, 127, -127, 126};
        for (int j = 0; j < want0.length; j++) {
            assertThat(q.quant(0, j)).as("value %s", b0[j]).isEqualTo(want0[j]);
        }
        assertThat(q.scale(0, 0)).isEqualTo(1f);
        assertThat(new int[] {q.quant(0, 32), q.quant(0, 33), q.quant(0, 34), q.quant(0, 35)}).containsExactly(-127, 64, 32, 0);
        assertThat(q.scale(0, 1)).isEqualTo(Float.float16ToFloat(Float.floatToFloat16(1f / 127f))).isNotEqualTo(1f / 127f);
        assertThat(q.scale(0, 2)).isZero();
        for (int j = 64; j < 96; j++) {
            assertThat(q.quant(0, j)).isZero();
        }
        assertThatThrownBy(() -> q.quantize(new float[48], 1, 48)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("multiple of 32");
    }

    @Test
    void onlyQ8_0HasAnInt8Kernel() {
        for (TensorType t : TensorType.values()) {
            assertThat(Int8Dot.supports(t)).as("%s", t).isEqualTo(t == TensorType.Q8_0);
        }
    }

    /** Unit scales: extreme quants (-128 and 127 weights against -127 and 127 activations) give exact integer sums. */
    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 9, 25})
    void extremeBlocksGiveTheExactIntegerSum(int blocks) {
        int n = 32 * blocks;
        ByteBuffer w = BlockPacker.le(34 * blocks);
        float[] x = new float[n];
        long want = 0;
        for (int b = 0; b < blocks; b++) {
            int[] q = new int[32];
            for (int j = 0; j < 32; j++) {
                q[j] = switch ((b + j) % 4) {
                    case 0 -> -128;
                    case 1 -> 127;
                    case 2 -> b % 2 == 0 ? -128 : 127;
                    default -> j * 8 - 128;
                };
                // activations +-127 (amax 127, so scale 1), all -127 in every third block
                int xv = b % 3 == 2 ? -127 : (j % 3 == 0 ? 127 : -127);
                x[32 * b + j] = xv;
                want += (long) q[j] * xv;
            }
            BlockPacker.q8_0(w, 1f, q);
        }
        Q8Activations xa = new Q8Activations();
        xa.quantize(x, 1, n);
        assertThat(Int8Dot.dot(TensorType.Q8_0, seg(w), 0, xa, 0, n)).isEqualTo((float) want);
        assertThat(Math.abs(want)).isLessThan(1L << 24);
    }

    /** Random blocks, random scales, several activation rows and a row offset into the segment. */
    @ParameterizedTest
    @ValueSource(ints = {32, 64, 96, 288, 800, 2048})
    void randomRowsMatchTheScalarReference(int n) {
        Random rnd = new Random(n);
        int rows = 3;
        int xRows = 2;
        ByteBuffer w = BlockPacker.le(7 + 34 * rows * n / 32);
        w.position(7);   // an unaligned start
        for (int b = 0; b < rows * n / 32; b++) {
            int[] q = new int[32];
            for (int j = 0; j < 32; j++) q[j] = rnd.nextInt(256) - 128;
            BlockPacker.q8_0(w, (float) rnd.nextGaussian(), q);
        }
        MemorySegment s = seg(w);
        float[] x = new float[xRows * n];
        for (int i = 0; i < x.length; i++) x[i] = (float) (rnd.nextGaussian() * (i % 64 < 32 ? 1 : 1e-3));
        Q8Activations xa = new Q8Activations();
        xa.quantize(x, xRows, n);
        for (int r = 0; r < rows; r++) {
            for (int i = 0; i < xRows; i++) {
                double[] rm = reference(s, 7 + 34L * r * n / 32, xa, i, n);
                float got = Int8Dot.dot(TensorType.Q8_0, s, 7 + 34L * r * n / 32, xa, i, n);
                assertThat((double) got).as("row %d x %d", r, i).isCloseTo(rm[0], org.assertj.core.data.Offset.offset(2e-6 * rm[1] + 1e-30));
            }
        }
    }

    /**
     * The four-row kernel ({@link Int8Dot#q8_0Rows4}, used on rows narrower than
     * {@link QuantMatmul#ROWS4_BELOW_COLS}) on random rows (random scales, extreme quants in every
     * fifth block, an unaligned start) of 1 to 25 blocks and two activation rows, directly and
     * through {@link QuantMatmul} over ranges that cut the groups of four anywhere: every row
     * within the tolerance of the scalar reference, nothing written outside. (Its bits equal the
     * single-row kernel's once both are compiled: {@link Rows4KernelComparison}.)
     */
    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 9, 24, 25})
    void fourRowKernelMatchesTheScalarReference(int blocks) {
        int n = 32 * blocks;
        Random rnd = new Random(4000 + blocks);
        int rows = 9;
        ByteBuffer w = BlockPacker.le(7 + 34 * rows * blocks);
        w.position(7);
        for (int b = 0; b < rows * blocks; b++) {
            int[] q = new int[32];
            for (int j = 0; j < 32; j++) q[j] = b % 5 == 0 ? (j % 2 == 0 ? -128 : 127) : rnd.nextInt(256) - 128;
            BlockPacker.q8_0(w, (float) rnd.nextGaussian(), q);
        }
        MemorySegment s = seg(w);
        long rowBytes = 34L * blocks;
        float[] x = new float[2 * n];
        for (int i = 0; i < x.length; i++) x[i] = (float) rnd.nextGaussian();
        Q8Activations xa = new Q8Activations();
        xa.quantize(x, 2, n);
        for (int i = 0; i < 2; i++) {
            float[] y = new float[6];
            Arrays.fill(y, -7f);
            Int8Dot.q8_0Rows4(s, 7 + rowBytes, rowBytes, xa.q, xa.d, i * n, n, y, 1);
            assertThat(y[0]).isEqualTo(-7f);
            assertThat(y[5]).isEqualTo(-7f);
            for (int k = 0; k < 4; k++) {
                double[] rm = reference(s, 7 + (1 + k) * rowBytes, xa, i, n);
                assertThat((double) y[1 + k]).as("row %d x %d", k, i).isCloseTo(rm[0], org.assertj.core.data.Offset.offset(2e-6 * rm[1] + 1e-30));
            }
        }
        Weight wt = new Weight(TensorType.Q8_0, s.asSlice(7), rows, n);
        for (int[] range : new int[][] {{0, 9}, {1, 8}, {3, 6}, {4, 8}}) {
            float[] y = new float[2 * rows];
            Arrays.fill(y, -7f);
            QuantMatmul.matmul(wt, xa, 2, y, range[0], range[1]);
            for (int i = 0; i < 2; i++) {
                for (int r = 0; r < rows; r++) {
                    if (r < range[0] || r >= range[1]) {
                        assertThat(y[i * rows + r]).as("range %s row %d x %d", Arrays.toString(range), r, i).isEqualTo(-7f);
                        continue;
                    }
                    double[] rm = reference(s, 7 + r * rowBytes, xa, i, n);
                    assertThat((double) y[i * rows + r]).as("range %s row %d x %d", Arrays.toString(range), r, i)
                            .isCloseTo(rm[0], org.assertj.core.data.Offset.offset(2e-6 * rm[1] + 1e-30));
                }
            }
        }
    }

    /** {@code {sum_b d_w d_x sum_j q_w q_x, sum_b |d_w d_x| sum_j |q_w q_x|}} for the row at {@code off} against activation row {@code i}. */
    private static double[] reference(MemorySegment s, long off, Q8Activations xa, int i, int n) {
        double ref = 0, mag = 0;
        for (int b = 0; b < n / 32; b++) {
            long p = off + 34L * b;
            long isum = 0, iabs = 0;
            for (int j = 0; j < 32; j++) {
                long prod = (long) s.get(java.lang.foreign.ValueLayout.JAVA_BYTE, p + 2 + j) * xa.quant(i, 32 * b + j);
                isum += prod;
                iabs += Math.abs(prod);
            }
            float d = Float.float16ToFloat(s.get(java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN), p))
                    * xa.scale(i, b);
            ref += (double) d * isum;
            mag += Math.abs((double) d) * iabs;
        }
        return new double[] {ref, mag};
    }
}

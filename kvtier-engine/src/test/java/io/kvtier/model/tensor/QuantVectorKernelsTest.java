package io.kvtier.model.tensor;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;
import java.util.stream.Stream;
import jdk.incubator.vector.FloatVector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Differential tests of the vector kernels ({@link QuantDot} in registers, {@link VectorDequant}
 * into rows, the tiled {@link QuantMatmul}) against {@link ScalarDequant}, on hand-built blocks
 * with edge values and on seeded random blocks. The kernels' width is fixed per JVM by
 * {@code kvtier.vector.bits}; the build runs this class once at the CPU's preferred width and
 * once more with {@code -Dkvtier.vector.bits=256} (the surefire execution {@code quant-kernels-256}),
 * so both widths are covered on an AVX-512 machine.
 *
 * <p>Tolerances: decoded values equal the reference bit for bit; a dot product is within
 * {@code 2e-6 * sum_i |w_i x_i|} of the double-precision reference (float32 sums in another order).
 */
class QuantVectorKernelsTest {

    private static MemorySegment seg(ByteBuffer b) {
        return MemorySegment.ofArray(Arrays.copyOf(b.array(), b.position()));
    }

    @Test
    void lanesFollowTheVectorBitsProperty() {
        String bits = System.getProperty(QuantSpecies.BITS_PROPERTY);
        boolean cpu512 = FloatVector.SPECIES_PREFERRED.vectorBitSize() >= 512;
        int expected = cpu512 && (bits == null || bits.isBlank() || bits.strip().equals("512")) ? 16 : 8;
        assertThat(QuantDot.lanes()).as("kvtier.vector.bits=%s", bits).isEqualTo(expected);
        assertThat(QuantSpecies.floats("256").length()).isEqualTo(8);
        assertThat(QuantSpecies.floats("128").length()).isEqualTo(8);
        assertThat(QuantSpecies.floats("512").length()).isEqualTo(cpu512 ? 16 : 8);
    }

    /** Hand-built blocks with the extreme values of each type, several blocks per row. */
    static Stream<Arguments> handBuilt() {
        // Q8_0: -128 and 127 at every position class, scales of both signs, a zero scale.
        ByteBuffer q8 = BlockPacker.le(34 * 4);
        for (int blk = 0; blk < 4; blk++) {
            int[] q = new int[32];
            for (int i = 0; i < 32; i++) {
                q[i] = (i + blk) % 3 == 0 ? -128 : (i + blk) % 3 == 1 ? 127 : i * 8 - 128;
            }
            BlockPacker.q8_0(q8, new float[] {0.5f, -65504f, 0f, 6.1035156e-5f}[blk], q);
        }
        // Q4_0: all 0, all 15, alternating, a ramp.
        ByteBuffer q4 = BlockPacker.le(18 * 4);
        for (int blk = 0; blk < 4; blk++) {
            int[] q = new int[32];
            for (int i = 0; i < 32; i++) {
                q[i] = switch (blk) {
                    case 0 -> 0;
                    case 1 -> 15;
                    case 2 -> i % 2 == 0 ? 0 : 15;
                    default -> i % 16;
                };
            }
            BlockPacker.q4_0(q4, blk == 1 ? -1.5f : 0.125f * (blk + 1), q);
        }
        // Q4_K: scales and mins 0 and 63 in every sub-block position (split high bits of 4..7), nibbles 0 and 15.
        ByteBuffer q4k = BlockPacker.le(144 * 3);
        int[][] scs = {{63, 63, 63, 63, 63, 63, 63, 63}, {0, 63, 1, 62, 32, 31, 48, 15}, {17, 0, 63, 5, 63, 0, 16, 47}};
        int[][] ms = {{63, 63, 63, 63, 63, 63, 63, 63}, {63, 0, 62, 1, 31, 32, 15, 48}, {0, 63, 3, 60, 0, 63, 33, 2}};
        for (int blk = 0; blk < 3; blk++) {
            int[] q = new int[256];
            for (int i = 0; i < 256; i++) {
                q[i] = blk == 0 ? 15 : (i * 11 + blk) % 16;
            }
            BlockPacker.q4K(q4k, blk == 2 ? -0.75f : 0.0625f, blk == 1 ? -0.5f : 0.03125f, scs[blk], ms[blk], q);
        }
        // Q6_K: scales -128..127 incl. both ends, 6-bit values 0 and 63 in all four runs of both halves.
        ByteBuffer q6k = BlockPacker.le(210 * 3);
        for (int blk = 0; blk < 3; blk++) {
            int[] sc = new int[16];
            int[] q = new int[256];
            for (int i = 0; i < 16; i++) {
                sc[i] = blk == 0 ? (i % 2 == 0 ? -128 : 127) : (i * 37 + blk * 11) % 256 - 128;
            }
            for (int i = 0; i < 256; i++) {
                q[i] = blk == 0 ? ((i / 32) % 2 == 0 ? 0 : 63) : (i * 13 + blk) % 64;
            }
            BlockPacker.q6K(q6k, blk == 1 ? -0.25f : 0.015625f, sc, q);
        }
        return Stream.of(Arguments.of(TensorType.Q8_0, seg(q8), 128), Arguments.of(TensorType.Q4_0, seg(q4), 128),
                Arguments.of(TensorType.Q4_K, seg(q4k), 768), Arguments.of(TensorType.Q6_K, seg(q6k), 768));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("handBuilt")
    void handBuiltBlocksDecodeExactlyAndDotWithinTolerance(TensorType type, MemorySegment w, int n) {
        assertDecodeAndDot(type, w, 0, n, 11);
    }

    static Stream<Arguments> randomCases() {
        Stream.Builder<Arguments> s = Stream.builder();
        long seed = 20261202;
        for (TensorType t : TensorType.values()) {
            int[] sizes = t.blockValues() == 1 ? new int[] {1, 7, 8, 15, 16, 17, 63, 64, 65, 1000}
                    : t.blockValues() == 32 ? new int[] {32, 64, 96, 288, 800} : new int[] {256, 512, 768, 2048};
            for (int n : sizes) {
                s.add(Arguments.of(t, n, seed++));
            }
        }
        return s.build();
    }

    /** Random block bytes (finite scales) at an odd byte offset: decode bit for bit, dot within tolerance. */
    @ParameterizedTest(name = "{0} n={1} seed={2}")
    @MethodSource("randomCases")
    void randomBlocksDecodeExactlyAndDotWithinTolerance(TensorType type, int n, long seed) {
        Random rnd = new Random(seed);
        byte[] raw = new byte[(int) type.rowBytes(n) + 5];
        rnd.nextBytes(raw);
        MemorySegment w = MemorySegment.ofArray(raw);
        QuantKernelsTest.fixHalves(type, w, 5, n, rnd);
        assertDecodeAndDot(type, w, 5, n, seed);
    }

    /** Half infinities and NaNs (exponent 31) decode to float infinities and NaNs, not to large finite values. */
    @Test
    void halfInfinitiesAndNaNs() {
        short[] specials = {0x7C00, (short) 0xFC00, 0x7E00, 0x7C01, (short) 0xFFFF, 0x7BFF, (short) 0x8001, 0x3C00};
        ByteBuffer b = BlockPacker.le(2 * 16);
        for (int i = 0; i < 16; i++) {
            b.putShort(specials[i % 8]);
        }
        MemorySegment w = seg(b);
        float[] got = new float[16];
        VectorDequant.row(TensorType.F16, w, 0, got, 0, 16);
        for (int i = 0; i < 16; i++) {
            assertThat(Float.floatToRawIntBits(got[i])).as("half %04x", specials[i % 8])
                    .isEqualTo(Float.floatToRawIntBits(Float.float16ToFloat(specials[i % 8])));
        }
        float[] ones = new float[16];
        Arrays.fill(ones, 1f);
        assertThat(QuantDot.dot(TensorType.F16, oneSpecialAmongOnes((short) 0x7C00), 0, ones, 0, 16))
                .isEqualTo(Float.POSITIVE_INFINITY);
        assertThat(QuantDot.dot(TensorType.F16, oneSpecialAmongOnes((short) 0xFC00), 0, ones, 0, 16))
                .isEqualTo(Float.NEGATIVE_INFINITY);
        assertThat(QuantDot.dot(TensorType.F16, oneSpecialAmongOnes((short) 0x7E00), 0, ones, 0, 16)).isNaN();
    }

    /** 16 halves: {@code special} at position 5, 1.0 elsewhere. */
    private static MemorySegment oneSpecialAmongOnes(short special) {
        ByteBuffer b = BlockPacker.le(2 * 16);
        for (int i = 0; i < 16; i++) {
            b.putShort(i == 5 ? special : 0x3C00);
        }
        return seg(b);
    }

    private static void assertDecodeAndDot(TensorType type, MemorySegment w, long off, int n, long seed) {
        float[] ref = new float[n + 3];
        ScalarDequant.dequantize(type, w, off, ref, 3, n);
        float[] got = new float[n + 3];
        VectorDequant.row(type, w, off, got, 3, n);
        for (int i = 3; i < n + 3; i++) {
            assertThat(got[i]).as("seed %d: %s value %d", seed, type, i - 3).isEqualTo(ref[i]);
        }
        Random rnd = new Random(seed);
        float[] x = gaussians(rnd, n + 7);
        double[] ea = exactAndAbs(ref, 3, x, 7, n);
        double exact = ea[0];
        double abs = ea[1];
        assertThat(ScalarDequant.dot(type, w, off, x, 7, n)).as("seed %d: scalar reference dot", seed).isEqualTo(exact);
        float dot = QuantDot.dot(type, w, off, x, 7, n);
        assertThat(Math.abs(dot - exact)).as("seed %d: %s dot %s vs reference %s", seed, type, dot, exact)
                .isLessThanOrEqualTo(2e-6 * abs + 1e-30);
    }

    /**
     * Both Q8_0 dot kernels (the two-block one that {@link QuantDot#dot} uses at 16 float lanes,
     * and the one-block one it uses at 8) on the same rows: the hand-built edge blocks (quants
     * -128 and 127, scales of both signs, a zero and a subnormal scale) and seeded random rows of
     * 1 to 9 blocks (odd counts leave the two-block kernel a last single block), each within the
     * dot tolerance of the double-precision reference. The two-block kernel needs 16 lanes, so
     * the 256-bit execution checks the one-block kernel only.
     */
    @ParameterizedTest(name = "blocks={0}")
    @MethodSource("q8BlockCounts")
    void q8_0KernelsMatchReference(int blocks) {
        long seed = 5150L + blocks;
        Random rnd = new Random(seed);
        MemorySegment w;
        int n = 32 * blocks;
        if (blocks == 4) {
            w = (MemorySegment) handBuilt().findFirst().orElseThrow().get()[1];
        } else {
            byte[] raw = new byte[(int) TensorType.Q8_0.rowBytes(n) + 3];
            rnd.nextBytes(raw);
            w = MemorySegment.ofArray(raw);
            QuantKernelsTest.fixHalves(TensorType.Q8_0, w, 3, n, rnd);
        }
        long off = blocks == 4 ? 0 : 3;
        float[] ref = new float[n];
        ScalarDequant.dequantize(TensorType.Q8_0, w, off, ref, 0, n);
        float[] x = gaussians(rnd, n + 5);
        double[] ea = exactAndAbs(ref, 0, x, 5, n);
        double exact = ea[0];
        double abs = ea[1];
        float one = QuantDot.q8_0Blocks(w, off, x, 5, n);
        assertThat(Math.abs(one - exact)).as("seed %d: one-block kernel %s vs %s", seed, one, exact)
                .isLessThanOrEqualTo(2e-6 * abs + 1e-30);
        if (QuantDot.lanes() == 16) {
            float two = QuantDot.q8_0Pairs(w, off, x, 5, n);
            assertThat(Math.abs(two - exact)).as("seed %d: two-block kernel %s vs %s", seed, two, exact)
                    .isLessThanOrEqualTo(2e-6 * abs + 1e-30);
        }
    }

    /**
     * The four-row Q4_0 kernel ({@link QuantDot#q4_0Rows4}) on four rows of the hand-built
     * extreme blocks (nibbles 0 and 15, scales of both signs) rotated so every row has its own
     * block order, and on seeded random rows of 1 to 25 blocks at odd byte and activation
     * offsets: each row within the dot tolerance of the double-precision reference, nothing
     * written beside the four outputs. (Its bits equal the single-row kernel's once both are
     * compiled: {@link Rows4KernelComparison} counts the rows that differ.)
     */
    @ParameterizedTest(name = "blocks={0}")
    @MethodSource("q4Rows4BlockCounts")
    void q4_0FourRowKernelMatchesReference(int blocks) {
        long seed = 4040L + blocks;
        Random rnd = new Random(seed);
        int n = 32 * blocks;
        long rowBytes = TensorType.Q4_0.rowBytes(n);
        byte[] raw = new byte[(int) (4 * rowBytes) + 3];
        rnd.nextBytes(raw);
        MemorySegment w = MemorySegment.ofArray(raw);
        if (blocks == 4) {   // the hand-built blocks, rotated by one block per row
            MemorySegment hand = (MemorySegment) handBuilt().skip(1).findFirst().orElseThrow().get()[1];
            for (int r = 0; r < 4; r++) {
                for (int b = 0; b < 4; b++) {
                    MemorySegment.copy(hand, 18L * ((b + r) % 4), w, 3 + r * rowBytes + 18L * b, 18);
                }
            }
        } else {
            for (int r = 0; r < 4; r++) {
                QuantKernelsTest.fixHalves(TensorType.Q4_0, w, 3 + r * rowBytes, n, rnd);
            }
        }
        float[] x = gaussians(rnd, n + 5);
        float[] y = new float[6];
        Arrays.fill(y, -7f);
        QuantDot.q4_0Rows4(w, 3, rowBytes, x, 5, n, y, 1);
        assertThat(y[0]).isEqualTo(-7f);
        assertThat(y[5]).isEqualTo(-7f);
        float[] ref = new float[n];
        for (int r = 0; r < 4; r++) {
            long off = 3 + r * rowBytes;
            ScalarDequant.dequantize(TensorType.Q4_0, w, off, ref, 0, n);
            double[] ea = exactAndAbs(ref, 0, x, 5, n);
            assertThat(Math.abs(y[1 + r] - ea[0])).as("seed %d: row %d vs reference %s", seed, r, ea[0])
                    .isLessThanOrEqualTo(2e-6 * ea[1] + 1e-30);
        }
    }

    static Stream<Integer> q4Rows4BlockCounts() {
        return Stream.of(1, 2, 3, 4, 5, 9, 24, 25);
    }

    /**
     * Decode products of Q4_0 rows narrower than {@link QuantMatmul#ROWS4_BELOW_COLS} (four rows
     * per pass) over ranges whose ends cut the groups of four anywhere, for 1 to 3 activation
     * rows: every row within the dot tolerance of the double-precision reference, the rows
     * outside the range untouched. (Bit equality with the single-row kernel holds between
     * compiled kernels, {@link Rows4KernelComparison}; early in a JVM one kernel may still run
     * the Vector API's Java fallback, which differed once by one ulp, so it is not asserted.)
     */
    @Test
    void q4_0DecodeProductOverRangesCuttingTheGroupsOfFour() {
        assertThat(QuantMatmul.ROWS4_BELOW_COLS).as("the 288-wide rows below take the four-row path").isGreaterThan(288);
        Random rnd = new Random(288);
        int rows = 13;
        int cols = 288;
        long rowBytes = TensorType.Q4_0.rowBytes(cols);
        byte[] raw = new byte[(int) rowBytes * rows];
        rnd.nextBytes(raw);
        MemorySegment seg = MemorySegment.ofArray(raw);
        for (int r = 0; r < rows; r++) {
            QuantKernelsTest.fixHalves(TensorType.Q4_0, seg, r * rowBytes, cols, rnd);
        }
        Weight w = new Weight(TensorType.Q4_0, seg, rows, cols);
        float[][] deq = new float[rows][cols];
        for (int r = 0; r < rows; r++) {
            ScalarDequant.dequantize(TensorType.Q4_0, seg, r * rowBytes, deq[r], 0, cols);
        }
        for (int n = 1; n <= 3; n++) {
            float[] x = gaussians(rnd, n * cols);
            for (int[] range : new int[][] {{0, 13}, {1, 10}, {3, 8}, {5, 6}, {4, 12}}) {
                float[] y = new float[n * rows];
                Arrays.fill(y, -7f);
                QuantMatmul.matmul(w, x, n, y, range[0], range[1]);
                for (int i = 0; i < n; i++) {
                    for (int r = 0; r < rows; r++) {
                        String what = String.format("n=%d range %s row %d token %d", n, Arrays.toString(range), r, i);
                        if (r < range[0] || r >= range[1]) {
                            assertThat(y[i * rows + r]).as(what).isEqualTo(-7f);
                            continue;
                        }
                        double[] ea = exactAndAbs(deq[r], 0, x, i * cols, cols);
                        assertThat(Math.abs(y[i * rows + r] - ea[0])).as("%s: %s vs %s", what, y[i * rows + r], ea[0])
                                .isLessThanOrEqualTo(2e-6 * ea[1] + 1e-30);
                    }
                }
            }
        }
    }

    static Stream<Integer> q8BlockCounts() {
        return Stream.of(1, 2, 3, 4, 5, 8, 9);
    }

    /** {@code len} seeded standard normal floats. */
    private static float[] gaussians(Random rnd, int len) {
        float[] x = new float[len];
        for (int i = 0; i < len; i++) {
            x[i] = (float) rnd.nextGaussian();
        }
        return x;
    }

    /** {@code {sum_i ref[r+i] * x[o+i], sum_i |ref[r+i] * x[o+i]|}} over {@code n} values, in double. */
    private static double[] exactAndAbs(float[] ref, int r, float[] x, int o, int n) {
        double exact = 0;
        double abs = 0;
        for (int i = 0; i < n; i++) {
            exact += (double) ref[r + i] * x[o + i];
            abs += Math.abs((double) ref[r + i] * x[o + i]);
        }
        return new double[] {exact, abs};
    }

    static Stream<Arguments> matmulCases() {
        Stream.Builder<Arguments> s = Stream.builder();
        long seed = 77;
        for (TensorType t : TensorType.values()) {
            int cols = t.blockValues() == 256 ? 512 : t.blockValues() == 32 ? 96 : 40;   // 40: not a multiple of the lanes
            for (int n : new int[] {1, 3, 4, 5, 8, 11}) {
                s.add(Arguments.of(t, cols, n, seed++));
            }
        }
        return s.build();
    }

    /**
     * The product over a range of output rows that is not a multiple of the tile (rows 1..9 of
     * 11), for batches below, at and around the tiled path's sizes: every output against the
     * reference, and the rows outside the range untouched.
     */
    @ParameterizedTest(name = "{0} cols={1} n={2} seed={3}")
    @MethodSource("matmulCases")
    void matmulOverARowRangeMatchesReference(TensorType type, int cols, int n, long seed) {
        Random rnd = new Random(seed);
        int rows = 11;
        byte[] raw = new byte[(int) type.rowBytes(cols) * rows];
        rnd.nextBytes(raw);
        MemorySegment seg = MemorySegment.ofArray(raw);
        for (int r = 0; r < rows; r++) {
            QuantKernelsTest.fixHalves(type, seg, r * type.rowBytes(cols), cols, rnd);
        }
        Weight w = new Weight(type, seg, rows, cols);
        float[] x = new float[n * cols];
        for (int i = 0; i < x.length; i++) {
            x[i] = (float) rnd.nextGaussian();
        }
        float[] y = new float[n * rows];
        Arrays.fill(y, -7f);
        QuantMatmul.matmul(w, x, n, y, 1, 10);
        float[] row = new float[cols];
        for (int r = 0; r < rows; r++) {
            ScalarDequant.dequantize(type, seg, w.rowOffset(r), row, 0, cols);
            for (int i = 0; i < n; i++) {
                if (r < 1 || r >= 10) {
                    assertThat(y[i * rows + r]).as("seed %d: row %d outside the range", seed, r).isEqualTo(-7f);
                    continue;
                }
                double exact = 0;
                double abs = 0;
                for (int k = 0; k < cols; k++) {
                    exact += (double) row[k] * x[i * cols + k];
                    abs += Math.abs((double) row[k] * x[i * cols + k]);
                }
                assertThat(Math.abs(y[i * rows + r] - exact)).as("seed %d: %s row %d token %d", seed, type, r, i)
                        .isLessThanOrEqualTo(2e-6 * abs + 1e-30);
            }
        }
    }
}

package io.kvtier.model.tensor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link Q4Interleaved}'s own arithmetic: the paired lanes' extreme short sums, the {@code - 8}
 * offsets and activation pairs they start from and meet, and which weights are interleaved.
 * What both layouts share (repacking, the kernel against the scalar reference on every range,
 * the float tiles) is {@link InterleavedTest}. Runs at the CPU's width and at 256 bits (surefire
 * execution {@code kernels-256}: groups of 8 rows instead of 16).
 */
class Q4InterleavedTest {

    private static final int G = Interleaved.GROUP;

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
                want[i * rows + r] = InterleavedTest.reference(TensorType.Q4_0, w, r, cols, xa, i);
            }
        }
        // the sums are exact integers times the scales: e.g. row 0 block 0, (15 - 8) * 127 * 32 = 28448
        // (and (0 - 8) * -127 * 32 = 32512 in the blocks of quants 0)
        double row0 = 0.5 * (28448.0 * xa.scale(0, 0) + 32512.0 * xa.scale(0, 1) + 28448.0 * xa.scale(0, 2) + 32512.0 * xa.scale(0, 3));
        assertThat((double) want[0]).isCloseTo(row0, org.assertj.core.data.Offset.offset(1e-5 * row0));
        MemorySegment packed = MemorySegment.ofArray(w.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
        Interleaved.repackInPlace(TensorType.Q4_0, packed, rows, cols);
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
        Interleaved.repackInPlace(TensorType.Q4_0, s, rows, cols);
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
    void onlyWholeGroupsOfQ4_0AndQ8_0RowsAreInterleaved() {
        assertThat(Interleaved.fits(2 * G, 64)).isTrue();
        assertThat(Interleaved.fits(2 * G + 4, 64)).isFalse();
        MemorySegment f16 = MemorySegment.ofArray(new byte[64 * G]);
        assertThatThrownBy(() -> new Weight(TensorType.F16, f16, G, 32, true))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cannot interleave a F16");
        MemorySegment q4 = MemorySegment.ofArray(new byte[18 * (G + 4)]);
        assertThatThrownBy(() -> Interleaved.repackInPlace(TensorType.Q4_0, q4, G + 4, 32)).isInstanceOf(IllegalArgumentException.class);
        Weight wt = new Weight(TensorType.Q4_0, MemorySegment.ofArray(new byte[18 * G]), G, 32, true);
        assertThat(wt.rowGroup()).isEqualTo(G);
        assertThat(new Weight(TensorType.Q4_0, MemorySegment.ofArray(new byte[18 * G]), G, 32).rowGroup()).isEqualTo(1);
        assertThatThrownBy(() -> wt.rowOffset(1)).isInstanceOf(IllegalStateException.class);
        assertThat(QuantMatmul.int8(wt)).isTrue();
    }
}

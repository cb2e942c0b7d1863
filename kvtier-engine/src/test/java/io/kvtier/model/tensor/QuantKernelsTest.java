package io.kvtier.model.tensor;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The dequantizers against values stated by hand (blocks packed by {@link BlockPacker}), and
 * the batched product against the reference (the differential tests of the vector kernels on
 * random blocks are {@link QuantVectorKernelsTest}'s).
 *
 * <p>Tolerance of a vector dot product: {@code |vector - reference| <= 2e-6 * sum_i |w_i x_i| + 1e-30}
 * where the reference is the double-precision sum of the exact dequantized values times the
 * activations: float32 summation in a different order, over at most a few thousand terms.
 */
class QuantKernelsTest {

    private static MemorySegment seg(ByteBuffer b) {
        return MemorySegment.ofArray(java.util.Arrays.copyOf(b.array(), b.position()));
    }

    private static float[] deq(TensorType t, MemorySegment s, int n) {
        float[] out = new float[n];
        ScalarDequant.dequantize(t, s, 0, out, 0, n);
        return out;
    }

    @Test
    void q8_0EveryInt8Value() {
        ByteBuffer b = BlockPacker.le(34 * 8);
        int[][] qs = new int[8][32];
        for (int blk = 0; blk < 8; blk++) {
            for (int i = 0; i < 32; i++) {
                qs[blk][i] = -128 + 32 * blk + i;    // -128..127 across the 8 blocks
            }
            BlockPacker.q8_0(b, blk == 7 ? -0.015625f : 0.5f * (blk + 1), qs[blk]);
        }
        float[] y = deq(TensorType.Q8_0, seg(b), 256);
        for (int blk = 0; blk < 8; blk++) {
            float d = blk == 7 ? -0.015625f : 0.5f * (blk + 1);
            for (int i = 0; i < 32; i++) {
                assertThat(y[32 * blk + i]).as("block %d value %d", blk, i).isEqualTo(d * qs[blk][i]);
            }
        }
    }

    @Test
    void q4_0EveryNibbleInBothHalves() {
        ByteBuffer b = BlockPacker.le(18 * 2);
        int[] q = new int[32];
        for (int i = 0; i < 32; i++) {
            q[i] = i % 16;
        }
        int[] r = new int[32];
        for (int i = 0; i < 32; i++) {
            r[i] = 15 - i % 16;
        }
        BlockPacker.q4_0(b, 0.25f, q);
        BlockPacker.q4_0(b, -3f, r);
        float[] y = deq(TensorType.Q4_0, seg(b), 64);
        for (int i = 0; i < 32; i++) {
            assertThat(y[i]).isEqualTo((q[i] - 8) * 0.25f);
            assertThat(y[32 + i]).isEqualTo((r[i] - 8) * -3f);
        }
    }

    /** Every sub-block gets its own scale and min, covering 0 and 63 and the high 2 bits of sub-blocks 4..7. */
    @Test
    void q4KEverySubBlockScaleAndMin() {
        int[][] scs = {{0, 1, 2, 63, 48, 17, 32, 63}, {63, 62, 33, 16, 0, 15, 47, 31}};
        int[][] ms = {{63, 0, 5, 40, 63, 1, 16, 50}, {1, 2, 3, 4, 60, 61, 62, 0}};
        float[] ds = {0.5f, 1.25f};
        float[] dmins = {0.125f, -2f};
        ByteBuffer b = BlockPacker.le(144 * 2);
        int[][] qs = new int[2][256];
        for (int blk = 0; blk < 2; blk++) {
            for (int i = 0; i < 256; i++) {
                qs[blk][i] = (i * 7 + blk) % 16;
            }
            BlockPacker.q4K(b, ds[blk], dmins[blk], scs[blk], ms[blk], qs[blk]);
        }
        float[] y = deq(TensorType.Q4_K, seg(b), 512);
        for (int blk = 0; blk < 2; blk++) {
            for (int i = 0; i < 256; i++) {
                int j = i / 32;
                float expected = ds[blk] * scs[blk][j] * qs[blk][i] - dmins[blk] * ms[blk][j];
                assertThat(y[256 * blk + i]).as("block %d value %d (sub-block %d)", blk, i, j).isEqualTo(expected);
            }
        }
    }

    /** All 16 int8 scales (negative, -128, 127) and all 64 six-bit values in every position class. */
    @Test
    void q6KEveryScaleAndSixBitValue() {
        int[] sc = {-128, 127, 1, -1, 0, 64, -64, 3, 100, -100, 7, -7, 31, -32, 2, 126};
        int[] q = new int[256];
        for (int i = 0; i < 256; i++) {
            q[i] = (i * 5 + i / 64) % 64;
        }
        ByteBuffer b = BlockPacker.le(210);
        BlockPacker.q6K(b, 0.03125f, sc, q);
        float[] y = deq(TensorType.Q6_K, seg(b), 256);
        for (int i = 0; i < 256; i++) {
            float expected = 0.03125f * sc[i / 16] * (q[i] - 32);
            assertThat(y[i]).as("value %d (scale %d)", i, i / 16).isEqualTo(expected);
        }
    }

    @Test
    void halfAndBfloatEdgeValues() {
        short[] halves = {0, (short) 0x8000, 0x0001, (short) 0x83FF, 0x3C00, (short) 0xFBFF, 0x7BFF, 0x0400};
        ByteBuffer b = BlockPacker.le(16);
        for (short h : halves) {
            b.putShort(h);
        }
        float[] y = deq(TensorType.F16, seg(b), 8);
        float[] x = new float[8];
        for (int i = 0; i < 8; i++) {
            assertThat(y[i]).isEqualTo(Float.float16ToFloat(halves[i]));
            x[i] = 1f;
        }
        // The vector path's bit-level half conversion on the same edge values (subnormals, -0, max).
        for (int i = 0; i < 8; i++) {
            float[] one = new float[16];
            one[i] = 1f;
            ByteBuffer wide = BlockPacker.le(32);
            for (int k = 0; k < 16; k++) {
                wide.putShort(halves[k % 8]);
            }
            assertThat(QuantDot.dot(TensorType.F16, seg(wide), 0, one, 0, 16)).isEqualTo(Float.float16ToFloat(halves[i]));
        }
        ByteBuffer bf = BlockPacker.le(4);
        bf.putShort((short) 0x3F80).putShort((short) 0xC2F7);
        assertThat(deq(TensorType.BF16, seg(bf), 2)).containsExactly(1f, -123.5f);
    }

    /** Random bytes may hold infinite/NaN halves; replaces each scale (or F16/BF16 value) by a finite random one. */
    static void fixHalves(TensorType t, MemorySegment w, long off, int n, Random rnd) {
        var i16 = java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);
        var f32 = java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);
        int blocks = n / t.blockValues();
        for (int b = 0; b < blocks; b++) {
            long p = off + (long) b * t.blockBytes();
            short h = Float.floatToFloat16((float) rnd.nextGaussian() * 0.1f);
            switch (t) {
                case F32 -> w.set(f32, p, (float) rnd.nextGaussian());
                case F16 -> w.set(i16, p, (short) (rnd.nextBoolean() ? h : rnd.nextInt(0x0400)));   // normals and subnormals
                case BF16 -> w.set(i16, p, (short) (Float.floatToIntBits((float) rnd.nextGaussian()) >>> 16));
                case Q8_0, Q4_0 -> w.set(i16, p, h);
                case Q4_K -> {
                    w.set(i16, p, h);
                    w.set(i16, p + 2, Float.floatToFloat16((float) rnd.nextGaussian() * 0.01f));
                }
                case Q6_K -> w.set(i16, p + 208, h);
            }
        }
    }

    /** The batched product (scratch-row path) and the per-row path agree with the reference for every row. */
    @Test
    void matmulBothPathsMatchReference() {
        Random rnd = new Random(7);
        for (TensorType type : TensorType.values()) {
            int cols = type.blockValues() == 256 ? 512 : 96;
            int rows = 5;
            byte[] raw = new byte[(int) type.rowBytes(cols) * rows];
            rnd.nextBytes(raw);
            MemorySegment seg = MemorySegment.ofArray(raw);
            for (int r = 0; r < rows; r++) {
                fixHalves(type, seg, r * type.rowBytes(cols), cols, rnd);
            }
            Weight w = new Weight(type, seg, rows, cols);
            for (int n : new int[] {1, QuantMatmul.SCRATCH_FROM + 1}) {
                float[] x = new float[n * cols];
                for (int i = 0; i < x.length; i++) {
                    x[i] = (float) rnd.nextGaussian();
                }
                float[] y = new float[n * rows];
                QuantMatmul.matmul(w, x, n, y, 0, rows);
                for (int i = 0; i < n; i++) {
                    for (int r = 0; r < rows; r++) {
                        double ref = ScalarDequant.dot(type, seg, w.rowOffset(r), x, i * cols, cols);
                        assertThat((double) y[i * rows + r]).as("%s n=%d row %d token %d", type, n, r, i)
                                .isCloseTo(ref, org.assertj.core.data.Offset.offset(1e-3 * Math.max(1, Math.abs(ref))));
                    }
                }
            }
        }
    }
}

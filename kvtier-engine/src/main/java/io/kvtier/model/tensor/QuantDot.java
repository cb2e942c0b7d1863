package io.kvtier.model.tensor;

import static io.kvtier.model.tensor.QuantSpecies.B;
import static io.kvtier.model.tensor.QuantSpecies.F;
import static io.kvtier.model.tensor.QuantSpecies.I;
import static io.kvtier.model.tensor.QuantSpecies.L;
import static io.kvtier.model.tensor.QuantSpecies.S;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Dot products of one encoded weight row with float32 activations, on
 * {@code jdk.incubator.vector}, decoding the blocks in registers: no row or matrix is ever
 * dequantized into memory. Activations stay float32 (they are not quantized to Q8 as llama.cpp
 * does), so results equal the dot product of {@link ScalarDequant}'s exact values with the
 * activations up to float summation order; the differential tests bound the difference.
 *
 * <p>Each kernel streams its row once: {@code L} quants ({@link QuantSpecies}) are loaded as one
 * byte vector and widened to ints once; nibbles and high bits are split with int and/shift/or;
 * the ints become floats once and meet the activations in one FMA per vector. A block's (or
 * sub-block's) sum is scaled once, into one of two accumulators that alternate between blocks
 * (the swap {@code acc1 = acc0; acc0 = next} keeps two FMA chains in flight without unrolling);
 * the lanes are reduced once, at the end of the row. Written for C2 like {@code VectorKernels}:
 * no helper takes or returns a vector, segment loads are never masked.
 */
public final class QuantDot {

    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(LE);
    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(LE);
    private static final VectorOperators.Conversion<Byte, Integer> B2I = VectorOperators.B2I;
    private static final VectorOperators.Conversion<Byte, Integer> ZB2I = VectorOperators.ZERO_EXTEND_B2I;
    private static final VectorOperators.Conversion<Integer, Float> I2F = VectorOperators.I2F;
    /** One Q8_0 block's 32 quants in one load ({@link #q8_0Pairs}). */
    private static final VectorSpecies<Byte> B32 = ByteVector.SPECIES_256;

    private QuantDot() {
    }

    /** Float lanes of the kernels (8 or 16), for reports and tests. */
    public static int lanes() {
        return L;
    }

    /**
     * {@code sum_i w_i * x[xOff+i]} over {@code n} values of a row of type {@code type} starting at
     * byte {@code off} of {@code w}; {@code n} is a multiple of the type's block size.
     */
    public static float dot(TensorType type, MemorySegment w, long off, float[] x, int xOff, int n) {
        return switch (type) {
            case F32 -> f32(w, off, x, xOff, n);
            case F16 -> f16(w, off, x, xOff, n);
            case BF16 -> bf16(w, off, x, xOff, n);
            case Q8_0 -> q8_0(w, off, x, xOff, n);
            case Q4_0 -> q4_0(w, off, x, xOff, n);
            case Q4_K -> q4K(w, off, x, xOff, n);
            case Q6_K -> q6K(w, off, x, xOff, n);
        };
    }

    static float f32(MemorySegment w, long off, float[] x, int xOff, int n) {
        FloatVector acc0 = FloatVector.zero(F), acc1 = acc0;
        int i = 0;
        for (; i + L <= n; i += L) {
            FloatVector next = FloatVector.fromMemorySegment(F, w, off + 4L * i, LE)
                    .fma(FloatVector.fromArray(F, x, xOff + i), acc1);
            acc1 = acc0;
            acc0 = next;
        }
        float s = Lanes.sum(acc0.add(acc1));
        for (; i < n; i++) {
            s += w.get(F32, off + 4L * i) * x[xOff + i];
        }
        return s;
    }

    /**
     * Half to float by bits, on sign-extended ints: {@code v << 13} masked to the sign and the 15
     * exponent/mantissa bits lands them in a float's place; times 2^112 rebiases the exponent
     * (which also makes half subnormals exact); exponent 31 (infinities, NaNs) gets the float
     * exponent 255 instead.
     */
    static float f16(MemorySegment w, long off, float[] x, int xOff, int n) {
        FloatVector acc0 = FloatVector.zero(F), acc1 = acc0;
        int i = 0;
        for (; i + L <= n; i += L) {
            IntVector v = (IntVector) ShortVector.fromMemorySegment(S, w, off + 2L * i, LE)
                    .convertShape(VectorOperators.S2I, I, 0);
            IntVector bits = v.lanewise(VectorOperators.LSHL, 13).and(0x8FFFE000);
            VectorMask<Integer> special = v.and(0x7C00).compare(VectorOperators.EQ, 0x7C00);
            IntVector h = bits.reinterpretAsFloats().mul(0x1p112f).reinterpretAsInts()
                    .blend(bits.or(0x7F800000), special);
            FloatVector next = h.reinterpretAsFloats().fma(FloatVector.fromArray(F, x, xOff + i), acc1);
            acc1 = acc0;
            acc0 = next;
        }
        float s = Lanes.sum(acc0.add(acc1));
        for (; i < n; i++) {
            s += Float.float16ToFloat(w.get(I16, off + 2L * i)) * x[xOff + i];
        }
        return s;
    }

    static float bf16(MemorySegment w, long off, float[] x, int xOff, int n) {
        FloatVector acc0 = FloatVector.zero(F), acc1 = acc0;
        int i = 0;
        for (; i + L <= n; i += L) {
            IntVector h = (IntVector) ShortVector.fromMemorySegment(S, w, off + 2L * i, LE)
                    .convertShape(VectorOperators.S2I, I, 0);
            FloatVector next = h.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats()
                    .fma(FloatVector.fromArray(F, x, xOff + i), acc1);
            acc1 = acc0;
            acc0 = next;
        }
        float s = Lanes.sum(acc0.add(acc1));
        for (; i < n; i++) {
            s += Float.intBitsToFloat((w.get(I16, off + 2L * i) & 0xFFFF) << 16) * x[xOff + i];
        }
        return s;
    }

    /** Q8_0: {@code d * sum(q * x)} per block of 32; the two-block kernel at 16 float lanes. */
    static float q8_0(MemorySegment w, long off, float[] x, int xOff, int n) {
        return L == 16 ? q8_0Pairs(w, off, x, xOff, n) : q8_0Blocks(w, off, x, xOff, n);
    }

    /** Q8_0 one block per iteration, {@code 32 / L} loads of {@code L} quants each (any lane count). */
    static float q8_0Blocks(MemorySegment w, long off, float[] x, int xOff, int n) {
        FloatVector acc0 = FloatVector.zero(F), acc1 = acc0;
        for (int b = 0; b < n / 32; b++) {
            long p = off + 34L * b;
            int xo = xOff + 32 * b;
            FloatVector t = FloatVector.zero(F);
            for (int i = 0; i < 32; i += L) {
                FloatVector q = (FloatVector) ByteVector.fromMemorySegment(B, w, p + 2 + i, LE)
                        .convertShape(VectorOperators.B2F, F, 0);
                t = q.fma(FloatVector.fromArray(F, x, xo + i), t);
            }
            FloatVector next = t.fma(FloatVector.broadcast(F, Float.float16ToFloat(w.get(I16, p))), acc1);
            acc1 = acc0;
            acc0 = next;
        }
        return Lanes.sum(acc0.add(acc1));
    }

    /**
     * Q8_0 at 16 float lanes, two blocks per iteration: each block's 32 quants are one 256-bit
     * load, widened by halves ({@code convertShape} parts 0 and 1), and each block has its own
     * accumulator. Measured against {@link #q8_0Blocks} on 64 MiB of 2048-wide rows (one thread,
     * A B A B in one JVM): 0.69 vs 0.53 of a plain streaming read at 2048 columns, 0.62 vs 0.49
     * at 768. Only for {@code L == 16}: {@code convertShape}'s part must be a constant.
     */
    static float q8_0Pairs(MemorySegment w, long off, float[] x, int xOff, int n) {
        FloatVector acc0 = FloatVector.zero(F), acc1 = acc0;
        int blocks = n / 32;
        int b = 0;
        for (; b + 1 < blocks; b += 2) {
            long p = off + 34L * b;
            int xo = xOff + 32 * b;
            ByteVector q0 = ByteVector.fromMemorySegment(B32, w, p + 2, LE);
            ByteVector q1 = ByteVector.fromMemorySegment(B32, w, p + 36, LE);
            FloatVector t0 = ((FloatVector) q0.convertShape(VectorOperators.B2F, F, 0)).mul(FloatVector.fromArray(F, x, xo));
            FloatVector t1 = ((FloatVector) q1.convertShape(VectorOperators.B2F, F, 0))
                    .mul(FloatVector.fromArray(F, x, xo + 32));
            t0 = ((FloatVector) q0.convertShape(VectorOperators.B2F, F, 1)).fma(FloatVector.fromArray(F, x, xo + 16), t0);
            t1 = ((FloatVector) q1.convertShape(VectorOperators.B2F, F, 1)).fma(FloatVector.fromArray(F, x, xo + 48), t1);
            acc0 = t0.fma(FloatVector.broadcast(F, Float.float16ToFloat(w.get(I16, p))), acc0);
            acc1 = t1.fma(FloatVector.broadcast(F, Float.float16ToFloat(w.get(I16, p + 34))), acc1);
        }
        if (b < blocks) {   // an odd block count: the last block alone
            long p = off + 34L * b;
            int xo = xOff + 32 * b;
            ByteVector q0 = ByteVector.fromMemorySegment(B32, w, p + 2, LE);
            FloatVector t0 = ((FloatVector) q0.convertShape(VectorOperators.B2F, F, 0)).mul(FloatVector.fromArray(F, x, xo));
            t0 = ((FloatVector) q0.convertShape(VectorOperators.B2F, F, 1)).fma(FloatVector.fromArray(F, x, xo + 16), t0);
            acc0 = t0.fma(FloatVector.broadcast(F, Float.float16ToFloat(w.get(I16, p))), acc0);
        }
        return Lanes.sum(acc0.add(acc1));
    }

    /**
     * Q4_0: {@code d * sum((nibble - 8) * x)} per block of 32; byte j holds values j (low) and 16+j
     * (high). The bytes are zero-extended, so the high nibble is a plain shift (no mask).
     */
    static float q4_0(MemorySegment w, long off, float[] x, int xOff, int n) {
        FloatVector acc0 = FloatVector.zero(F), acc1 = acc0;
        for (int b = 0; b < n / 32; b++) {
            long p = off + 18L * b;
            int xo = xOff + 32 * b;
            FloatVector t = FloatVector.zero(F);
            for (int j = 0; j < 16; j += L) {
                IntVector q = (IntVector) ByteVector.fromMemorySegment(B, w, p + 2 + j, LE).convertShape(ZB2I, I, 0);
                FloatVector lo = (FloatVector) q.and(0xF).sub(8).convert(I2F, 0);
                FloatVector hi = (FloatVector) q.lanewise(VectorOperators.LSHR, 4).sub(8).convert(I2F, 0);
                t = lo.fma(FloatVector.fromArray(F, x, xo + j), t);
                t = hi.fma(FloatVector.fromArray(F, x, xo + 16 + j), t);
            }
            FloatVector next = t.fma(FloatVector.broadcast(F, Float.float16ToFloat(w.get(I16, p))), acc1);
            acc1 = acc0;
            acc0 = next;
        }
        return Lanes.sum(acc0.add(acc1));
    }

    /**
     * Four Q4_0 rows at once: {@code y[yOff + k] = } {@link #q4_0}{@code (w, off + k * rowBytes, x, xOff, n)}
     * for {@code k < 4}: each row keeps the single-row kernel's two alternating accumulators and
     * its order of operations (compiled, the same bits); the activation vectors are loaded once for the
     * four rows and the four rows' loops become one. Faster on short rows, where the per-row
     * work outside the block loop weighs most ({@link QuantMatmul#ROWS4_BELOW_COLS}).
     */
    static void q4_0Rows4(MemorySegment w, long off, long rowBytes, float[] x, int xOff, int n, float[] y, int yOff) {
        FloatVector a0 = FloatVector.zero(F), b0 = a0, a1 = a0, b1 = a0, a2 = a0, b2 = a0, a3 = a0, b3 = a0;
        long o1 = off + rowBytes, o2 = o1 + rowBytes, o3 = o2 + rowBytes;
        for (int b = 0; b < n / 32; b++) {
            long bo = 18L * b;
            int xo = xOff + 32 * b;
            FloatVector t0 = FloatVector.zero(F), t1 = t0, t2 = t0, t3 = t0;
            for (int j = 0; j < 16; j += L) {
                FloatVector xl = FloatVector.fromArray(F, x, xo + j);
                FloatVector xh = FloatVector.fromArray(F, x, xo + 16 + j);
                IntVector q0 = (IntVector) ByteVector.fromMemorySegment(B, w, off + bo + 2 + j, LE).convertShape(ZB2I, I, 0);
                IntVector q1 = (IntVector) ByteVector.fromMemorySegment(B, w, o1 + bo + 2 + j, LE).convertShape(ZB2I, I, 0);
                IntVector q2 = (IntVector) ByteVector.fromMemorySegment(B, w, o2 + bo + 2 + j, LE).convertShape(ZB2I, I, 0);
                IntVector q3 = (IntVector) ByteVector.fromMemorySegment(B, w, o3 + bo + 2 + j, LE).convertShape(ZB2I, I, 0);
                t0 = ((FloatVector) q0.and(0xF).sub(8).convert(I2F, 0)).fma(xl, t0);
                t1 = ((FloatVector) q1.and(0xF).sub(8).convert(I2F, 0)).fma(xl, t1);
                t2 = ((FloatVector) q2.and(0xF).sub(8).convert(I2F, 0)).fma(xl, t2);
                t3 = ((FloatVector) q3.and(0xF).sub(8).convert(I2F, 0)).fma(xl, t3);
                t0 = ((FloatVector) q0.lanewise(VectorOperators.LSHR, 4).sub(8).convert(I2F, 0)).fma(xh, t0);
                t1 = ((FloatVector) q1.lanewise(VectorOperators.LSHR, 4).sub(8).convert(I2F, 0)).fma(xh, t1);
                t2 = ((FloatVector) q2.lanewise(VectorOperators.LSHR, 4).sub(8).convert(I2F, 0)).fma(xh, t2);
                t3 = ((FloatVector) q3.lanewise(VectorOperators.LSHR, 4).sub(8).convert(I2F, 0)).fma(xh, t3);
            }
            FloatVector n0 = t0.fma(FloatVector.broadcast(F, Float.float16ToFloat(w.get(I16, off + bo))), b0);
            FloatVector n1 = t1.fma(FloatVector.broadcast(F, Float.float16ToFloat(w.get(I16, o1 + bo))), b1);
            FloatVector n2 = t2.fma(FloatVector.broadcast(F, Float.float16ToFloat(w.get(I16, o2 + bo))), b2);
            FloatVector n3 = t3.fma(FloatVector.broadcast(F, Float.float16ToFloat(w.get(I16, o3 + bo))), b3);
            b0 = a0;
            a0 = n0;
            b1 = a1;
            a1 = n1;
            b2 = a2;
            a2 = n2;
            b3 = a3;
            a3 = n3;
        }
        y[yOff] = Lanes.sum(a0.add(b0));
        y[yOff + 1] = Lanes.sum(a1.add(b1));
        y[yOff + 2] = Lanes.sum(a2.add(b2));
        y[yOff + 3] = Lanes.sum(a3.add(b3));
    }

    /**
     * Q4_K: per sub-block of 32, {@code d*sc * sum(q * x) - dmin*m * sum(x)}; the two sub-blocks
     * of a 64-value group share 32 bytes (low nibbles, high nibbles), each into its own
     * accumulator pair.
     */
    static float q4K(MemorySegment w, long off, float[] x, int xOff, int n) {
        FloatVector lo = FloatVector.zero(F), hi = lo, minLo = lo, minHi = lo;
        for (int b = 0; b < n / 256; b++) {
            long p = off + 144L * b;
            float d = Float.float16ToFloat(w.get(I16, p));
            float dmin = Float.float16ToFloat(w.get(I16, p + 2));
            for (int g = 0; g < 4; g++) {
                int sm1 = ScalarDequant.scaleMinK4(w, p + 4, 2 * g);
                int sm2 = ScalarDequant.scaleMinK4(w, p + 4, 2 * g + 1);
                long qs = p + 16 + 32L * g;
                int xo = xOff + 256 * b + 64 * g;
                FloatVector tLo = FloatVector.zero(F), tHi = tLo, xLo = tLo, xHi = tLo;
                for (int l = 0; l < 32; l += L) {
                    IntVector q = (IntVector) ByteVector.fromMemorySegment(B, w, qs + l, LE).convertShape(B2I, I, 0);
                    FloatVector a = FloatVector.fromArray(F, x, xo + l);
                    FloatVector c = FloatVector.fromArray(F, x, xo + 32 + l);
                    tLo = ((FloatVector) q.and(0xF).convert(I2F, 0)).fma(a, tLo);
                    tHi = ((FloatVector) q.lanewise(VectorOperators.ASHR, 4).and(0xF).convert(I2F, 0)).fma(c, tHi);
                    xLo = xLo.add(a);
                    xHi = xHi.add(c);
                }
                lo = tLo.fma(FloatVector.broadcast(F, d * (sm1 & 0xFF)), lo);
                hi = tHi.fma(FloatVector.broadcast(F, d * (sm2 & 0xFF)), hi);
                minLo = xLo.fma(FloatVector.broadcast(F, dmin * (sm1 >> 8)), minLo);
                minHi = xHi.fma(FloatVector.broadcast(F, dmin * (sm2 >> 8)), minHi);
            }
        }
        return Lanes.sum(lo.add(hi).sub(minLo.add(minHi)));
    }

    /**
     * Q6_K: per half of 128 values, vector {@code l} of {@code ql[0..31]}, {@code ql[32..63]} and
     * {@code qh[0..31]} holds values l, l+32, l+64, l+96 (4 low bits from ql, 2 high bits from qh,
     * minus 32), each scaled by its 16-value int8 scale, into four accumulators.
     */
    static float q6K(MemorySegment w, long off, float[] x, int xOff, int n) {
        FloatVector acc1 = FloatVector.zero(F), acc2 = acc1, acc3 = acc1, acc4 = acc1;
        for (int b = 0; b < n / 256; b++) {
            long p = off + 210L * b;
            float d = Float.float16ToFloat(w.get(I16, p + 208));
            for (int half = 0; half < 2; half++) {
                long ql = p + 64L * half;
                long qh = p + 128 + 32L * half;
                long sc = p + 192 + 8L * half;
                int xo = xOff + 256 * b + 128 * half;
                for (int l = 0; l < 32; l += L) {
                    IntVector a = (IntVector) ByteVector.fromMemorySegment(B, w, ql + l, LE).convertShape(B2I, I, 0);
                    IntVector c = (IntVector) ByteVector.fromMemorySegment(B, w, ql + 32 + l, LE).convertShape(B2I, I, 0);
                    IntVector h = (IntVector) ByteVector.fromMemorySegment(B, w, qh + l, LE).convertShape(B2I, I, 0);
                    long s = sc + l / 16;   // one scale per 16 values; L <= 16 keeps a vector inside one
                    FloatVector q1 = (FloatVector) a.and(0xF).or(h.and(3).lanewise(VectorOperators.LSHL, 4))
                            .sub(32).convert(I2F, 0);
                    FloatVector q2 = (FloatVector) c.and(0xF).or(h.and(0xC).lanewise(VectorOperators.LSHL, 2))
                            .sub(32).convert(I2F, 0);
                    FloatVector q3 = (FloatVector) a.lanewise(VectorOperators.ASHR, 4).and(0xF).or(h.and(0x30))
                            .sub(32).convert(I2F, 0);
                    FloatVector q4 = (FloatVector) c.lanewise(VectorOperators.ASHR, 4).and(0xF)
                            .or(h.lanewise(VectorOperators.ASHR, 2).and(0x30)).sub(32).convert(I2F, 0);
                    acc1 = q1.mul(FloatVector.fromArray(F, x, xo + l))
                            .fma(FloatVector.broadcast(F, d * w.get(ValueLayout.JAVA_BYTE, s)), acc1);
                    acc2 = q2.mul(FloatVector.fromArray(F, x, xo + 32 + l))
                            .fma(FloatVector.broadcast(F, d * w.get(ValueLayout.JAVA_BYTE, s + 2)), acc2);
                    acc3 = q3.mul(FloatVector.fromArray(F, x, xo + 64 + l))
                            .fma(FloatVector.broadcast(F, d * w.get(ValueLayout.JAVA_BYTE, s + 4)), acc3);
                    acc4 = q4.mul(FloatVector.fromArray(F, x, xo + 96 + l))
                            .fma(FloatVector.broadcast(F, d * w.get(ValueLayout.JAVA_BYTE, s + 6)), acc4);
                }
            }
        }
        return Lanes.sum(acc1.add(acc2).add(acc3.add(acc4)));
    }
}

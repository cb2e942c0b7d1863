package io.kvtier.model.tensor;

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
 * <p>Width: 16 float lanes where the CPU's preferred vectors are 512 bits wide, else 8 (a
 * narrower float species would need byte vectors of 4 lanes, which do not exist). Like
 * {@code VectorKernels}, no helper takes or returns a vector (the JIT boxes vectors that cross
 * a call it did not inline), and segment loads are never masked.
 */
public final class QuantDot {

    private static final VectorSpecies<Float> FS =
            FloatVector.SPECIES_PREFERRED.vectorBitSize() >= 512 ? FloatVector.SPECIES_512 : FloatVector.SPECIES_256;
    private static final int L = FS.length();
    private static final VectorSpecies<Byte> BS = L == 16 ? ByteVector.SPECIES_128 : ByteVector.SPECIES_64;
    private static final VectorSpecies<Short> SS = L == 16 ? ShortVector.SPECIES_256 : ShortVector.SPECIES_128;
    private static final VectorSpecies<Integer> IS = L == 16 ? IntVector.SPECIES_512 : IntVector.SPECIES_256;
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(LE);
    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(LE);

    private QuantDot() {
    }

    /** Float lanes of the kernels (8 or 16), for reports. */
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
        FloatVector s0 = FloatVector.zero(FS), s1 = s0;
        int i = 0;
        for (; i + 2 * L <= n; i += 2 * L) {
            s0 = FloatVector.fromMemorySegment(FS, w, off + 4L * i, LE).fma(FloatVector.fromArray(FS, x, xOff + i), s0);
            s1 = FloatVector.fromMemorySegment(FS, w, off + 4L * (i + L), LE)
                    .fma(FloatVector.fromArray(FS, x, xOff + i + L), s1);
        }
        for (; i + L <= n; i += L) {
            s0 = FloatVector.fromMemorySegment(FS, w, off + 4L * i, LE).fma(FloatVector.fromArray(FS, x, xOff + i), s0);
        }
        float s = s0.add(s1).reduceLanes(VectorOperators.ADD);
        for (; i < n; i++) {
            s += w.get(F32, off + 4L * i) * x[xOff + i];
        }
        return s;
    }

    static float f16(MemorySegment w, long off, float[] x, int xOff, int n) {
        FloatVector acc = FloatVector.zero(FS);
        int i = 0;
        for (; i + L <= n; i += L) {
            // half -> float by bits: shift exponent+mantissa into place, rescale by 2^112 (this
            // also handles subnormals), force the exponent of infinities/NaNs, then add the sign.
            IntVector h = (IntVector) ShortVector.fromMemorySegment(SS, w, off + 2L * i, LE)
                    .convertShape(VectorOperators.S2I, IS, 0);
            IntVector em = h.and(0x7FFF).lanewise(VectorOperators.LSHL, 13);
            VectorMask<Integer> special = h.and(0x7C00).compare(VectorOperators.EQ, 0x7C00);
            IntVector bits = em.reinterpretAsFloats().mul(0x1p112f).reinterpretAsInts()
                    .blend(em.or(0x7F800000), special)
                    .or(h.and(0x8000).lanewise(VectorOperators.LSHL, 16));
            acc = bits.reinterpretAsFloats().fma(FloatVector.fromArray(FS, x, xOff + i), acc);
        }
        float s = acc.reduceLanes(VectorOperators.ADD);
        for (; i < n; i++) {
            s += Float.float16ToFloat(w.get(I16, off + 2L * i)) * x[xOff + i];
        }
        return s;
    }

    static float bf16(MemorySegment w, long off, float[] x, int xOff, int n) {
        FloatVector acc = FloatVector.zero(FS);
        int i = 0;
        for (; i + L <= n; i += L) {
            IntVector h = (IntVector) ShortVector.fromMemorySegment(SS, w, off + 2L * i, LE)
                    .convertShape(VectorOperators.S2I, IS, 0);
            acc = h.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats()
                    .fma(FloatVector.fromArray(FS, x, xOff + i), acc);
        }
        float s = acc.reduceLanes(VectorOperators.ADD);
        for (; i < n; i++) {
            s += Float.intBitsToFloat((w.get(I16, off + 2L * i) & 0xFFFF) << 16) * x[xOff + i];
        }
        return s;
    }

    static float q8_0(MemorySegment w, long off, float[] x, int xOff, int n) {
        FloatVector acc = FloatVector.zero(FS);
        for (int b = 0; b < n / 32; b++) {
            long p = off + 34L * b;
            int xo = xOff + 32 * b;
            FloatVector s = FloatVector.zero(FS);
            for (int i = 0; i < 32; i += L) {
                FloatVector q = (FloatVector) ByteVector.fromMemorySegment(BS, w, p + 2 + i, LE)
                        .convertShape(VectorOperators.B2F, FS, 0);
                s = q.fma(FloatVector.fromArray(FS, x, xo + i), s);
            }
            acc = s.fma(FloatVector.broadcast(FS, Float.float16ToFloat(w.get(I16, p))), acc);
        }
        return acc.reduceLanes(VectorOperators.ADD);
    }

    static float q4_0(MemorySegment w, long off, float[] x, int xOff, int n) {
        FloatVector acc = FloatVector.zero(FS);
        for (int b = 0; b < n / 32; b++) {
            long p = off + 18L * b;
            int xo = xOff + 32 * b;
            FloatVector s = FloatVector.zero(FS);
            for (int j = 0; j < 16; j += L) {
                ByteVector q = ByteVector.fromMemorySegment(BS, w, p + 2 + j, LE);
                FloatVector lo = (FloatVector) q.and((byte) 0xF).sub((byte) 8).convertShape(VectorOperators.B2F, FS, 0);
                FloatVector hi = (FloatVector) q.lanewise(VectorOperators.LSHR, 4).sub((byte) 8)
                        .convertShape(VectorOperators.B2F, FS, 0);
                s = lo.fma(FloatVector.fromArray(FS, x, xo + j), s);
                s = hi.fma(FloatVector.fromArray(FS, x, xo + 16 + j), s);
            }
            acc = s.fma(FloatVector.broadcast(FS, Float.float16ToFloat(w.get(I16, p))), acc);
        }
        return acc.reduceLanes(VectorOperators.ADD);
    }

    static float q4K(MemorySegment w, long off, float[] x, int xOff, int n) {
        FloatVector acc = FloatVector.zero(FS);
        FloatVector mins = FloatVector.zero(FS);
        int[] sm = new int[2];
        for (int b = 0; b < n / 256; b++) {
            long p = off + 144L * b;
            float d = Float.float16ToFloat(w.get(I16, p));
            float dmin = Float.float16ToFloat(w.get(I16, p + 2));
            for (int g = 0; g < 4; g++) {
                ScalarDequant.scaleMinK4(w, p + 4, 2 * g, sm);
                float d1 = d * sm[0];
                float m1 = dmin * sm[1];
                ScalarDequant.scaleMinK4(w, p + 4, 2 * g + 1, sm);
                float d2 = d * sm[0];
                float m2 = dmin * sm[1];
                long qs = p + 16 + 32L * g;
                int xo = xOff + 256 * b + 64 * g;
                FloatVector sLo = FloatVector.zero(FS), sHi = sLo, xLo = sLo, xHi = sLo;
                for (int l = 0; l < 32; l += L) {
                    ByteVector q = ByteVector.fromMemorySegment(BS, w, qs + l, LE);
                    FloatVector a = FloatVector.fromArray(FS, x, xo + l);
                    FloatVector c = FloatVector.fromArray(FS, x, xo + 32 + l);
                    sLo = ((FloatVector) q.and((byte) 0xF).convertShape(VectorOperators.B2F, FS, 0)).fma(a, sLo);
                    sHi = ((FloatVector) q.lanewise(VectorOperators.LSHR, 4).convertShape(VectorOperators.B2F, FS, 0))
                            .fma(c, sHi);
                    xLo = xLo.add(a);
                    xHi = xHi.add(c);
                }
                acc = sLo.fma(FloatVector.broadcast(FS, d1), acc);
                acc = sHi.fma(FloatVector.broadcast(FS, d2), acc);
                mins = xLo.fma(FloatVector.broadcast(FS, m1), mins);
                mins = xHi.fma(FloatVector.broadcast(FS, m2), mins);
            }
        }
        return acc.sub(mins).reduceLanes(VectorOperators.ADD);
    }

    static float q6K(MemorySegment w, long off, float[] x, int xOff, int n) {
        FloatVector acc = FloatVector.zero(FS);
        for (int b = 0; b < n / 256; b++) {
            long p = off + 210L * b;
            float d = Float.float16ToFloat(w.get(I16, p + 208));
            for (int half = 0; half < 2; half++) {
                long ql = p + 64L * half;
                long qh = p + 128 + 32L * half;
                long sc = p + 192 + 8L * half;
                int xo = xOff + 256 * b + 128 * half;
                for (int l = 0; l < 32; l += L) {
                    ByteVector a = ByteVector.fromMemorySegment(BS, w, ql + l, LE);
                    ByteVector c = ByteVector.fromMemorySegment(BS, w, ql + 32 + l, LE);
                    ByteVector h = ByteVector.fromMemorySegment(BS, w, qh + l, LE);
                    int is = l / 16;   // one scale per 16 values; L <= 16 keeps a vector inside one
                    FloatVector q1 = (FloatVector) a.and((byte) 0xF)
                            .or(h.and((byte) 3).lanewise(VectorOperators.LSHL, 4)).sub((byte) 32)
                            .convertShape(VectorOperators.B2F, FS, 0);
                    FloatVector q2 = (FloatVector) c.and((byte) 0xF)
                            .or(h.lanewise(VectorOperators.LSHR, 2).and((byte) 3).lanewise(VectorOperators.LSHL, 4))
                            .sub((byte) 32).convertShape(VectorOperators.B2F, FS, 0);
                    FloatVector q3 = (FloatVector) a.lanewise(VectorOperators.LSHR, 4)
                            .or(h.lanewise(VectorOperators.LSHR, 4).and((byte) 3).lanewise(VectorOperators.LSHL, 4))
                            .sub((byte) 32).convertShape(VectorOperators.B2F, FS, 0);
                    FloatVector q4 = (FloatVector) c.lanewise(VectorOperators.LSHR, 4)
                            .or(h.lanewise(VectorOperators.LSHR, 6).lanewise(VectorOperators.LSHL, 4))
                            .sub((byte) 32).convertShape(VectorOperators.B2F, FS, 0);
                    acc = q1.mul(FloatVector.fromArray(FS, x, xo + l)).fma(FloatVector.broadcast(FS, d * w.get(ValueLayout.JAVA_BYTE, sc + is)), acc);
                    acc = q2.mul(FloatVector.fromArray(FS, x, xo + 32 + l))
                            .fma(FloatVector.broadcast(FS, d * w.get(ValueLayout.JAVA_BYTE, sc + is + 2)), acc);
                    acc = q3.mul(FloatVector.fromArray(FS, x, xo + 64 + l))
                            .fma(FloatVector.broadcast(FS, d * w.get(ValueLayout.JAVA_BYTE, sc + is + 4)), acc);
                    acc = q4.mul(FloatVector.fromArray(FS, x, xo + 96 + l))
                            .fma(FloatVector.broadcast(FS, d * w.get(ValueLayout.JAVA_BYTE, sc + is + 6)), acc);
                }
            }
        }
        return acc.reduceLanes(VectorOperators.ADD);
    }
}

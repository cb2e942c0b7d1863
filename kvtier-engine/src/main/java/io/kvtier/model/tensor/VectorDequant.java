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

/**
 * Decodes encoded rows into float32 on {@code jdk.incubator.vector}, for the batched product
 * (prefill), which decodes each weight row once per step into a small tile and multiplies it
 * with every activation row. The values are exactly {@link ScalarDequant}'s (the same float
 * operations in the same order, lane by lane), which the differential tests check bit for bit.
 * The bit manipulations are those of {@link QuantDot}, which keeps the decoded values in
 * registers instead.
 */
final class VectorDequant {

    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(LE);
    private static final VectorOperators.Conversion<Byte, Integer> B2I = VectorOperators.B2I;
    private static final VectorOperators.Conversion<Integer, Float> I2F = VectorOperators.I2F;

    private VectorDequant() {
    }

    /**
     * Decodes {@code n} values (whole blocks) of type {@code type} at byte {@code off} of {@code w}
     * into {@code dst[dstOff..dstOff+n-1]}.
     */
    static void row(TensorType type, MemorySegment w, long off, float[] dst, int dstOff, int n) {
        switch (type) {
            case F32 -> MemorySegment.copy(w, ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(LE), off, dst, dstOff, n);
            case F16 -> f16(w, off, dst, dstOff, n);
            case BF16 -> ScalarDequant.dequantize(type, w, off, dst, dstOff, n);
            case Q8_0 -> q8_0(w, off, dst, dstOff, n);
            case Q4_0 -> q4_0(w, off, dst, dstOff, n);
            case Q4_K -> q4K(w, off, dst, dstOff, n);
            case Q6_K -> q6K(w, off, dst, dstOff, n);
        }
    }

    /** As {@link QuantDot#f16}. */
    private static void f16(MemorySegment w, long off, float[] dst, int o, int n) {
        int i = 0;
        for (; i + L <= n; i += L) {
            IntVector v = (IntVector) ShortVector.fromMemorySegment(S, w, off + 2L * i, LE)
                    .convertShape(VectorOperators.S2I, I, 0);
            IntVector bits = v.lanewise(VectorOperators.LSHL, 13).and(0x8FFFE000);
            VectorMask<Integer> special = v.and(0x7C00).compare(VectorOperators.EQ, 0x7C00);
            // + 0 quiets a signalling NaN, as Float.float16ToFloat (vcvtph2ps) does; infinities stay.
            IntVector inf = bits.or(0x7F800000).reinterpretAsFloats().add(0f).reinterpretAsInts();
            bits.reinterpretAsFloats().mul(0x1p112f).reinterpretAsInts().blend(inf, special)
                    .reinterpretAsFloats().intoArray(dst, o + i);
        }
        for (; i < n; i++) {
            dst[o + i] = Float.float16ToFloat(w.get(I16, off + 2L * i));
        }
    }

    private static void q8_0(MemorySegment w, long off, float[] dst, int o, int n) {
        for (int b = 0; b < n / 32; b++) {
            long p = off + 34L * b;
            FloatVector d = FloatVector.broadcast(F, Float.float16ToFloat(w.get(I16, p)));
            for (int i = 0; i < 32; i += L) {
                FloatVector q = (FloatVector) ByteVector.fromMemorySegment(B, w, p + 2 + i, LE)
                        .convertShape(VectorOperators.B2F, F, 0);
                d.mul(q).intoArray(dst, o + 32 * b + i);
            }
        }
    }

    private static void q4_0(MemorySegment w, long off, float[] dst, int o, int n) {
        for (int b = 0; b < n / 32; b++) {
            long p = off + 18L * b;
            FloatVector d = FloatVector.broadcast(F, Float.float16ToFloat(w.get(I16, p)));
            for (int j = 0; j < 16; j += L) {
                IntVector q = (IntVector) ByteVector.fromMemorySegment(B, w, p + 2 + j, LE).convertShape(B2I, I, 0);
                ((FloatVector) q.and(0xF).sub(8).convert(I2F, 0)).mul(d).intoArray(dst, o + 32 * b + j);
                ((FloatVector) q.lanewise(VectorOperators.ASHR, 4).and(0xF).sub(8).convert(I2F, 0)).mul(d)
                        .intoArray(dst, o + 32 * b + 16 + j);
            }
        }
    }

    /** {@code d*sc * q - dmin*m}, multiplied and subtracted separately as ggml does (no FMA). */
    private static void q4K(MemorySegment w, long off, float[] dst, int o, int n) {
        for (int b = 0; b < n / 256; b++) {
            long p = off + 144L * b;
            float d = Float.float16ToFloat(w.get(I16, p));
            float dmin = Float.float16ToFloat(w.get(I16, p + 2));
            for (int g = 0; g < 4; g++) {
                int sm1 = ScalarDequant.scaleMinK4(w, p + 4, 2 * g);
                int sm2 = ScalarDequant.scaleMinK4(w, p + 4, 2 * g + 1);
                FloatVector d1 = FloatVector.broadcast(F, d * (sm1 & 0xFF));
                FloatVector m1 = FloatVector.broadcast(F, dmin * (sm1 >> 8));
                FloatVector d2 = FloatVector.broadcast(F, d * (sm2 & 0xFF));
                FloatVector m2 = FloatVector.broadcast(F, dmin * (sm2 >> 8));
                long qs = p + 16 + 32L * g;
                int base = o + 256 * b + 64 * g;
                for (int l = 0; l < 32; l += L) {
                    IntVector q = (IntVector) ByteVector.fromMemorySegment(B, w, qs + l, LE).convertShape(B2I, I, 0);
                    d1.mul((FloatVector) q.and(0xF).convert(I2F, 0)).sub(m1).intoArray(dst, base + l);
                    d2.mul((FloatVector) q.lanewise(VectorOperators.ASHR, 4).and(0xF).convert(I2F, 0)).sub(m2)
                            .intoArray(dst, base + 32 + l);
                }
            }
        }
    }

    /** {@code (d * scale) * q}, in that order as ggml does. */
    private static void q6K(MemorySegment w, long off, float[] dst, int o, int n) {
        for (int b = 0; b < n / 256; b++) {
            long p = off + 210L * b;
            float d = Float.float16ToFloat(w.get(I16, p + 208));
            for (int half = 0; half < 2; half++) {
                long ql = p + 64L * half;
                long qh = p + 128 + 32L * half;
                long sc = p + 192 + 8L * half;
                int base = o + 256 * b + 128 * half;
                for (int l = 0; l < 32; l += L) {
                    IntVector a = (IntVector) ByteVector.fromMemorySegment(B, w, ql + l, LE).convertShape(B2I, I, 0);
                    IntVector c = (IntVector) ByteVector.fromMemorySegment(B, w, ql + 32 + l, LE).convertShape(B2I, I, 0);
                    IntVector h = (IntVector) ByteVector.fromMemorySegment(B, w, qh + l, LE).convertShape(B2I, I, 0);
                    long s = sc + l / 16;
                    FloatVector.broadcast(F, d * w.get(ValueLayout.JAVA_BYTE, s))
                            .mul((FloatVector) a.and(0xF).or(h.and(3).lanewise(VectorOperators.LSHL, 4)).sub(32)
                                    .convert(I2F, 0))
                            .intoArray(dst, base + l);
                    FloatVector.broadcast(F, d * w.get(ValueLayout.JAVA_BYTE, s + 2))
                            .mul((FloatVector) c.and(0xF).or(h.and(0xC).lanewise(VectorOperators.LSHL, 2)).sub(32)
                                    .convert(I2F, 0))
                            .intoArray(dst, base + 32 + l);
                    FloatVector.broadcast(F, d * w.get(ValueLayout.JAVA_BYTE, s + 4))
                            .mul((FloatVector) a.lanewise(VectorOperators.ASHR, 4).and(0xF).or(h.and(0x30)).sub(32)
                                    .convert(I2F, 0))
                            .intoArray(dst, base + 64 + l);
                    FloatVector.broadcast(F, d * w.get(ValueLayout.JAVA_BYTE, s + 6))
                            .mul((FloatVector) c.lanewise(VectorOperators.ASHR, 4).and(0xF)
                                    .or(h.lanewise(VectorOperators.ASHR, 2).and(0x30)).sub(32).convert(I2F, 0))
                            .intoArray(dst, base + 96 + l);
                }
            }
        }
    }
}

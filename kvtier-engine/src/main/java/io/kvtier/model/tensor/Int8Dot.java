package io.kvtier.model.tensor;

import static io.kvtier.model.tensor.QuantSpecies.F;
import static io.kvtier.model.tensor.QuantSpecies.I;
import static io.kvtier.model.tensor.QuantSpecies.L;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Dot products of one Q8_0 weight row with activations quantized to Q8_0 blocks
 * ({@link Q8Activations}), as llama.cpp's {@code ggml_vec_dot_q8_0_q8_0} and
 * {@code ggml_vec_dot_q4_0_q8_0} compute them: per block of 32 an exact integer dot product,
 * converted to float once and scaled by {@code d_w * d_x}; the blocks' scaled sums are added in
 * float. The integer sums are exact whatever the vector width; only the float additions of the
 * blocks' sums differ in order from llama.cpp.
 *
 * <p>Integer products in short lanes: a weight times a quant is at most
 * {@code 128 * 127 = 16256} in magnitude, so two of them fit a short; the short products are
 * reinterpreted as ints and each pair added by {@code (p + (p << 16)) >> 16} (the high half of
 * the sum is the pair's sum modulo 2^16, which is exact because it fits). Written for C2 like
 * {@link QuantDot}: no helper takes or returns a vector, segment loads are never masked.
 */
public final class Int8Dot {

    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(LE);
    /** Bytes and shorts of {@code 2L} lanes: their products reinterpret as {@code L} ints. */
    private static final VectorSpecies<Byte> B2L = L == 16 ? ByteVector.SPECIES_256 : ByteVector.SPECIES_128;
    private static final VectorSpecies<Short> S2L = L == 16 ? ShortVector.SPECIES_512 : ShortVector.SPECIES_256;

    private Int8Dot() {
    }

    /**
     * Whether {@code type}'s rows have a kernel here: Q8_0 only. A Q4_0 kernel on the same
     * activations was slower than {@link QuantDot#q4_0} on float ones (docs/design-notes.md).
     */
    public static boolean supports(TensorType type) {
        return type == TensorType.Q8_0;
    }

    /**
     * {@code sum_b d_w(b) * d_x(b) * sum_j q_w(b, j) * q_x(b, j)} over the {@code n / 32} blocks of
     * a row of {@code type} at byte {@code off} of {@code w}, against row {@code xRow} of
     * {@code x} ({@code n == x.cols()}).
     *
     * @throws IllegalArgumentException for a type {@link #supports} refuses
     */
    public static float dot(TensorType type, MemorySegment w, long off, Q8Activations x, int xRow, int n) {
        return switch (type) {
            case Q8_0 -> q8_0(w, off, x.q, x.d, xRow * n, n);
            default -> throw new IllegalArgumentException("no int8 kernel for " + type);
        };
    }

    /** Q8_0: per block, the 32 products as short pairs summed into {@code L} int lanes, one convert, one FMA. */
    static float q8_0(MemorySegment w, long off, short[] xq, float[] xd, int xo, int n) {
        FloatVector acc0 = FloatVector.zero(F), acc1 = acc0;
        for (int b = 0; b < n / 32; b++) {
            long p = off + 34L * b;
            int xi = xo + 32 * b;
            IntVector s = pairSums(w, p + 2, xq, xi);
            for (int j = 2 * L; j < 32; j += 2 * L) {   // no trips at 16 lanes
                s = s.add(pairSums(w, p + 2 + j, xq, xi + j));
            }
            FloatVector next = ((FloatVector) s.convert(VectorOperators.I2F, 0))
                    .fma(FloatVector.broadcast(F, Float.float16ToFloat(w.get(I16, p)) * xd[xi >> 5]), acc1);
            acc1 = acc0;
            acc0 = next;
        }
        return Lanes.sum(acc0.add(acc1));
    }

    /**
     * Four Q8_0 rows at once: {@code y[yOff + k] = } {@link #q8_0}{@code (w, off + k * rowBytes, xq, xd, xo, n)}
     * for {@code k < 4}: each row keeps the single-row kernel's two alternating accumulators and
     * its order of operations (compiled, the same bits); the quantized activations are loaded once for
     * the four rows. Used on short rows only ({@link QuantMatmul#ROWS4_BELOW_COLS}).
     */
    static void q8_0Rows4(MemorySegment w, long off, long rowBytes, short[] xq, float[] xd, int xo, int n, float[] y, int yOff) {
        FloatVector a0 = FloatVector.zero(F), b0 = a0, a1 = a0, b1 = a0, a2 = a0, b2 = a0, a3 = a0, b3 = a0;
        long o1 = off + rowBytes, o2 = o1 + rowBytes, o3 = o2 + rowBytes;
        for (int b = 0; b < n / 32; b++) {
            long bo = 34L * b;
            int xi = xo + 32 * b;
            IntVector s0 = pairSums(w, off + bo + 2, xq, xi);
            IntVector s1 = pairSums(w, o1 + bo + 2, xq, xi);
            IntVector s2 = pairSums(w, o2 + bo + 2, xq, xi);
            IntVector s3 = pairSums(w, o3 + bo + 2, xq, xi);
            for (int j = 2 * L; j < 32; j += 2 * L) {   // no trips at 16 lanes
                s0 = s0.add(pairSums(w, off + bo + 2 + j, xq, xi + j));
                s1 = s1.add(pairSums(w, o1 + bo + 2 + j, xq, xi + j));
                s2 = s2.add(pairSums(w, o2 + bo + 2 + j, xq, xi + j));
                s3 = s3.add(pairSums(w, o3 + bo + 2 + j, xq, xi + j));
            }
            float dx = xd[xi >> 5];
            FloatVector n0 = ((FloatVector) s0.convert(VectorOperators.I2F, 0))
                    .fma(FloatVector.broadcast(F, Float.float16ToFloat(w.get(I16, off + bo)) * dx), b0);
            FloatVector n1 = ((FloatVector) s1.convert(VectorOperators.I2F, 0))
                    .fma(FloatVector.broadcast(F, Float.float16ToFloat(w.get(I16, o1 + bo)) * dx), b1);
            FloatVector n2 = ((FloatVector) s2.convert(VectorOperators.I2F, 0))
                    .fma(FloatVector.broadcast(F, Float.float16ToFloat(w.get(I16, o2 + bo)) * dx), b2);
            FloatVector n3 = ((FloatVector) s3.convert(VectorOperators.I2F, 0))
                    .fma(FloatVector.broadcast(F, Float.float16ToFloat(w.get(I16, o3 + bo)) * dx), b3);
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

    /** {@code 2L} int8 weights at {@code at} times {@code xq[xi..]}: {@code L} ints, each the sum of a pair of products. */
    private static IntVector pairSums(MemorySegment w, long at, short[] xq, int xi) {
        IntVector p = ((ShortVector) ByteVector.fromMemorySegment(B2L, w, at, LE).convertShape(VectorOperators.B2S, S2L, 0))
                .mul(ShortVector.fromArray(S2L, xq, xi)).reinterpretAsInts();
        return p.add(p.lanewise(VectorOperators.LSHL, 16)).lanewise(VectorOperators.ASHR, 16);
    }
}

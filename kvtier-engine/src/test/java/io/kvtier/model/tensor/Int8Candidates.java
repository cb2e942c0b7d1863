package io.kvtier.model.tensor;

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
 * Kernels for {@link Int8ProductComparison} (not used by the engine): main's Q4_0 decode kernel
 * and float tile decode before branch quant11 (the baselines of its A/B), and Q8_0 variants
 * tried and not adopted (docs/design-notes.md).
 */
final class Int8Candidates {

    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(LE);
    private static final VectorSpecies<Short> S2 = L == 16 ? ShortVector.SPECIES_512 : ShortVector.SPECIES_256;
    private static final VectorSpecies<Byte> B2L = L == 16 ? ByteVector.SPECIES_256 : ByteVector.SPECIES_128;
    private static final int G = Interleaved.GROUP;
    private static final long BB = Q4Interleaved.BLOCK_BYTES;

    private Int8Candidates() {
    }

    /** Q8_0 row: the two product vectors of a block added in shorts (2 products, at most 32512), one fold. */
    static float q8Short(MemorySegment w, long off, short[] xq, float[] xd, int xo, int n) {
        FloatVector acc0 = FloatVector.zero(F), acc1 = acc0;
        for (int b = 0; b < n / 32; b++) {
            long p = off + 34L * b;
            int xi = xo + 32 * b;
            ShortVector s = products(w, p + 2, xq, xi);
            for (int j = 2 * L; j < 32; j += 2 * L) {
                s = s.add(products(w, p + 2 + j, xq, xi + j));
            }
            IntVector pi = s.reinterpretAsInts();
            IntVector sum = pi.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16)
                    .add(pi.lanewise(VectorOperators.ASHR, 16));
            FloatVector next = ((FloatVector) sum.convert(VectorOperators.I2F, 0))
                    .fma(FloatVector.broadcast(F, Float.float16ToFloat(w.get(I16, p)) * xd[xi >> 5]), acc1);
            acc1 = acc0;
            acc0 = next;
        }
        return acc0.add(acc1).reduceLanes(VectorOperators.ADD);
    }

    /** As {@link #q8Short}, two rows per pass sharing the activation loads. */
    static void q8Short2(MemorySegment w, long off, long rowBytes, short[] xq, float[] xd, int xo, int n, float[] y, int yo) {
        FloatVector a0 = FloatVector.zero(F), b0 = a0, a1 = a0, b1 = a0;
        long o1 = off + rowBytes;
        for (int b = 0; b < n / 32; b++) {
            long bo = 34L * b;
            int xi = xo + 32 * b;
            ShortVector x0 = ShortVector.fromArray(S2, xq, xi);
            ShortVector s0 = ((ShortVector) ByteVector.fromMemorySegment(B2L, w, off + bo + 2, LE).convertShape(VectorOperators.B2S, S2, 0)).mul(x0);
            ShortVector s1 = ((ShortVector) ByteVector.fromMemorySegment(B2L, w, o1 + bo + 2, LE).convertShape(VectorOperators.B2S, S2, 0)).mul(x0);
            for (int j = 2 * L; j < 32; j += 2 * L) {
                ShortVector xj = ShortVector.fromArray(S2, xq, xi + j);
                s0 = s0.add(((ShortVector) ByteVector.fromMemorySegment(B2L, w, off + bo + 2 + j, LE).convertShape(VectorOperators.B2S, S2, 0)).mul(xj));
                s1 = s1.add(((ShortVector) ByteVector.fromMemorySegment(B2L, w, o1 + bo + 2 + j, LE).convertShape(VectorOperators.B2S, S2, 0)).mul(xj));
            }
            float dx = xd[xi >> 5];
            IntVector pi = s0.reinterpretAsInts();
            IntVector sum = pi.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(pi.lanewise(VectorOperators.ASHR, 16));
            FloatVector n0 = ((FloatVector) sum.convert(VectorOperators.I2F, 0))
                    .fma(FloatVector.broadcast(F, Float.float16ToFloat(w.get(I16, off + bo)) * dx), b0);
            pi = s1.reinterpretAsInts();
            sum = pi.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(pi.lanewise(VectorOperators.ASHR, 16));
            FloatVector n1 = ((FloatVector) sum.convert(VectorOperators.I2F, 0))
                    .fma(FloatVector.broadcast(F, Float.float16ToFloat(w.get(I16, o1 + bo)) * dx), b1);
            b0 = a0;
            a0 = n0;
            b1 = a1;
            a1 = n1;
        }
        y[yo] = a0.add(b0).reduceLanes(VectorOperators.ADD);
        y[yo + 1] = a1.add(b1).reduceLanes(VectorOperators.ADD);
    }

    private static ShortVector products(MemorySegment w, long at, short[] xq, int xi) {
        return ((ShortVector) ByteVector.fromMemorySegment(B2L, w, at, LE).convertShape(VectorOperators.B2S, S2, 0))
                .mul(ShortVector.fromArray(S2, xq, xi));
    }

    /** Main's kernel before this branch (the baseline of the A/B): block sums subtracted per block, the scale blend for inf/nan. */
    static void oldMatmul(MemorySegment w, int rows, int cols, Q8Activations x, int[] sums, float[] y) {
        int nb = cols / 32;
        for (int g = 0; g < rows / G; g++) {
            oldGroup(w, (long) g * nb * BB, nb, x.pairs[0], x.d, sums, 0, y, g * G);
        }
    }

    /** Each block's sum of quants (the old kernel's input). */
    static int[] blockSums(Q8Activations x, int cols) {
        int[] r = new int[cols / 32];
        for (int b = 0; b < r.length; b++) {
            for (int j = 0; j < 32; j++) r[b] += x.q[32 * b + j];
        }
        return r;
    }

    static void oldGroup(MemorySegment w, long base, int nb, int[] xp, float[] xd, int[] xs, int xo,
                              float[] out, int outOff) {
        FloatVector acc = FloatVector.zero(F);
        for (int b = 0; b < nb; b++) {
            long p = base + b * BB + 2L * G;
            int xi = xo + 16 * b;
            ShortVector v = ShortVector.fromMemorySegment(S2, w, p, LE);
            ShortVector s = v.and((short) 0xF).mul(IntVector.broadcast(I, xp[xi]).reinterpretAsShorts())
                    .add(v.lanewise(VectorOperators.LSHR, 4).and((short) 0xF).mul(IntVector.broadcast(I, xp[xi + 1]).reinterpretAsShorts()))
                    .add(v.lanewise(VectorOperators.LSHR, 8).and((short) 0xF).mul(IntVector.broadcast(I, xp[xi + 2]).reinterpretAsShorts()))
                    .add(v.lanewise(VectorOperators.LSHR, 12).mul(IntVector.broadcast(I, xp[xi + 3]).reinterpretAsShorts()));
            v = ShortVector.fromMemorySegment(S2, w, p + 4L * G, LE);
            s = s.add(v.and((short) 0xF).mul(IntVector.broadcast(I, xp[xi + 4]).reinterpretAsShorts()))
                    .add(v.lanewise(VectorOperators.LSHR, 4).and((short) 0xF).mul(IntVector.broadcast(I, xp[xi + 5]).reinterpretAsShorts()))
                    .add(v.lanewise(VectorOperators.LSHR, 8).and((short) 0xF).mul(IntVector.broadcast(I, xp[xi + 6]).reinterpretAsShorts()))
                    .add(v.lanewise(VectorOperators.LSHR, 12).mul(IntVector.broadcast(I, xp[xi + 7]).reinterpretAsShorts()));
            v = ShortVector.fromMemorySegment(S2, w, p + 8L * G, LE);
            s = s.add(v.and((short) 0xF).mul(IntVector.broadcast(I, xp[xi + 8]).reinterpretAsShorts()))
                    .add(v.lanewise(VectorOperators.LSHR, 4).and((short) 0xF).mul(IntVector.broadcast(I, xp[xi + 9]).reinterpretAsShorts()))
                    .add(v.lanewise(VectorOperators.LSHR, 8).and((short) 0xF).mul(IntVector.broadcast(I, xp[xi + 10]).reinterpretAsShorts()))
                    .add(v.lanewise(VectorOperators.LSHR, 12).mul(IntVector.broadcast(I, xp[xi + 11]).reinterpretAsShorts()));
            v = ShortVector.fromMemorySegment(S2, w, p + 12L * G, LE);
            s = s.add(v.and((short) 0xF).mul(IntVector.broadcast(I, xp[xi + 12]).reinterpretAsShorts()))
                    .add(v.lanewise(VectorOperators.LSHR, 4).and((short) 0xF).mul(IntVector.broadcast(I, xp[xi + 13]).reinterpretAsShorts()))
                    .add(v.lanewise(VectorOperators.LSHR, 8).and((short) 0xF).mul(IntVector.broadcast(I, xp[xi + 14]).reinterpretAsShorts()))
                    .add(v.lanewise(VectorOperators.LSHR, 12).mul(IntVector.broadcast(I, xp[xi + 15]).reinterpretAsShorts()));
            int blk = xi >> 4;
            IntVector halves = s.reinterpretAsInts();
            IntVector sum = halves.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16)
                    .add(halves.lanewise(VectorOperators.ASHR, 16))
                    .sub(8 * xs[blk]);
            IntVector h = (IntVector) ShortVector.fromMemorySegment(S, w, p - 2L * G, LE)
                    .convertShape(VectorOperators.S2I, I, 0);
            IntVector bits = h.lanewise(VectorOperators.LSHL, 13).and(0x8FFFE000);
            VectorMask<Integer> special = h.and(0x7C00).compare(VectorOperators.EQ, 0x7C00);
            FloatVector d = bits.reinterpretAsFloats().mul(0x1p112f).reinterpretAsInts()
                    .blend(bits.or(0x7F800000), special).reinterpretAsFloats();
            acc = ((FloatVector) sum.convert(VectorOperators.I2F, 0)).fma(d.mul(xd[blk]), acc);
        }
        acc.intoArray(out, outOff);
    }

    /** Main's float tile decode before this branch (the baseline of the A/B). */
    static void oldDecodeGroup(MemorySegment w, long base, int nb, float[] tile, int tileOff) {
        for (int b = 0; b < nb; b++) {
            long p = base + b * BB;
            IntVector h = (IntVector) ShortVector.fromMemorySegment(S, w, p, LE).convertShape(VectorOperators.S2I, I, 0);
            IntVector bits = h.lanewise(VectorOperators.LSHL, 13).and(0x8FFFE000);
            VectorMask<Integer> special = h.and(0x7C00).compare(VectorOperators.EQ, 0x7C00);
            FloatVector d = bits.reinterpretAsFloats().mul(0x1p112f).reinterpretAsInts()
                    .blend(bits.or(0x7F800000), special).reinterpretAsFloats();
            int o = tileOff + 32 * b * G;
            for (int m = 0; m < 4; m++) {
                IntVector v = IntVector.fromMemorySegment(I, w, p + 2L * G + 4L * G * m, LE);
                int at = o + 8 * m * G;
                for (int t = 0; t < 8; t++) {   // nibble t of the int: value 8m + t
                    ((FloatVector) v.lanewise(VectorOperators.LSHR, 4 * t).and(0xF).sub(8).convert(VectorOperators.I2F, 0))
                            .mul(d).intoArray(tile, at + t * G);
                }
            }
        }
    }
}

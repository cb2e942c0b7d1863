package io.kvtier.model.tensor;

import static io.kvtier.model.tensor.QuantSpecies.F;
import static io.kvtier.model.tensor.QuantSpecies.I;
import static io.kvtier.model.tensor.QuantSpecies.L;
import static io.kvtier.model.tensor.QuantSpecies.S;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * The Q4_0 quants of {@link Interleaved}'s layout and its kernels: after a block's
 * {@code GROUP} scales, 4 vectors of {@code 2 GROUP} little-endian shorts ("paired lanes"): vector
 * {@code m} lane {@code 2r} = the unsigned 4-bit quants of values {@code 8m .. 8m+3} of row r's
 * block in bits 0-3, 4-7, 8-11, 12-15, lane {@code 2r+1} those of values {@code 8m+4 .. 8m+7}
 * ({@link #shortAt}). So the two lanes of a row are one int lane, and the activations a nibble
 * vector meets are one pair per int, broadcast as a plain 32-bit value
 * ({@link Q8Activations#pairs}); as ints, a vector is also the float tile decode's input with no
 * widening ({@link #decodeGroup}).
 *
 * <p>Overflow: a short lane starts at {@code -8} times the sum of the 16 activation quants it
 * meets ({@link Q8Activations#offsets}) and adds the 16 products {@code q * x} (quants 0..15,
 * activation quants -127..127), so it ends at {@code sum (q - 8) x}, at most
 * {@code 16 * 8 * 127 = 16256} in magnitude (a partial sum may pass a short's range and wrap;
 * additions modulo 2^16 still end exact). A row's two lanes together are at most 32512, a
 * short as well, so each int lane folds its pair in 3 operations.
 */
final class Q4Interleaved {

    private static final int GROUP = Interleaved.GROUP;
    /** Bytes of one block of a whole group. */
    static final long BLOCK_BYTES = Interleaved.blockBytes(TensorType.Q4_0);
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(LE);
    /** {@code 2 GROUP} shorts: one nibble vector of the layout, the shape of {@code GROUP} ints. */
    private static final VectorSpecies<Short> S2 = L == 16 ? ShortVector.SPECIES_512 : ShortVector.SPECIES_256;

    private Q4Interleaved() {
    }

    /**
     * Writes row {@code r}'s 32 quants of one block (the 16 bytes at {@code src[qs..]}) into the
     * group's block at {@code dst[d..]}, in this layout.
     */
    static void packQuants(byte[] src, int qs, byte[] dst, int d, int r) {
        for (int k = 0; k < 8; k++) {
            int v = 0;
            for (int t = 0; t < 4; t++) {
                v |= nibble(src, qs, 4 * k + t) << (4 * t);
            }
            int at = d + 2 * shortAt(r, k);
            dst[at] = (byte) v;
            dst[at + 1] = (byte) (v >> 8);
        }
    }

    /**
     * Index, in shorts from the start of a group's block, of the short holding values
     * {@code 4k .. 4k+3} ({@code k < 8}) of the group's row {@code r}: after the {@code GROUP}
     * scales, vector {@code k / 2} of {@code 2 GROUP} shorts, lane {@code 2r + k % 2}.
     */
    static int shortAt(int r, int k) {
        return GROUP + (k >> 1) * 2 * GROUP + 2 * r + (k & 1);
    }

    /** The unsigned quant of value {@code j} (0..31) of the Q4_0 block whose 16 quant bytes start at {@code qs}. */
    private static int nibble(byte[] a, int qs, int j) {
        int q = a[qs + (j & 15)] & 0xFF;
        return j < 16 ? q & 0xF : q >> 4;
    }

    /** Writes the 32 values {@code (q - 8) * d} of the group's row {@code lane} in the block at byte {@code p} of {@code w} to {@code dst[o..]}. */
    static void decodeQuants(MemorySegment w, long p, int lane, float d, float[] dst, int o) {
        for (int k = 0; k < 8; k++) {
            int v = w.get(I16, p + 2L * shortAt(lane, k));
            dst[o + 4 * k] = ((v & 0xF) - 8) * d;
            dst[o + 4 * k + 1] = (((v >> 4) & 0xF) - 8) * d;
            dst[o + 4 * k + 2] = (((v >> 8) & 0xF) - 8) * d;
            dst[o + 4 * k + 3] = (((v >> 12) & 0xF) - 8) * d;
        }
    }

    /**
     * Groups {@code gFrom..gTo-1} against one activation row ({@code xp}, {@code xd}, {@code xoff}:
     * its {@link Q8Activations#pairs}, scales and offsets): group g's {@code GROUP} dot products
     * into {@code out[outOff + g*GROUP ..]}. Per block: 4 loads of {@code 2 GROUP} shorts, each split
     * into 4 nibble vectors, each multiplied by an activation pair broadcast as one int (lane
     * {@code 2r} meets value {@code 8m+t}, lane {@code 2r+1} value {@code 8m+4+t}) and summed in
     * shorts that start at the block's {@code - 8} offsets: a lane ends at {@code sum (q - 8) x}
     * over its 16 values, at most {@code 16 * 8 * 127 = 16256} in magnitude (partial sums may
     * wrap; the end fits), so a row's two lanes together fit a short too and fold as
     * {@code (p + (p << 16)) >> 16} on the ints; one convert, the {@code GROUP} scales made floats
     * from their half bits ({@link Interleaved#SCALES}), one FMA.
     */
    static void groups(MemorySegment w, int nb, int gFrom, int gTo, int[] xp, float[] xd, int[] xoff,
                               float[] out, int outOff) {
        for (int g = gFrom; g < gTo; g++) {
            long base = (long) g * nb * BLOCK_BYTES;
            FloatVector acc = FloatVector.zero(F);
            for (int b = 0; b < nb; b++) {
                long p = base + b * BLOCK_BYTES + 2L * GROUP;
                int xi = 16 * b;
                ShortVector v = ShortVector.fromMemorySegment(S2, w, p, LE);
                ShortVector s = IntVector.broadcast(I, xoff[b]).reinterpretAsShorts()
                        .add(v.and((short) 0xF).mul(IntVector.broadcast(I, xp[xi]).reinterpretAsShorts()))
                        .add(v.lanewise(VectorOperators.LSHR, 4).and((short) 0xF).mul(IntVector.broadcast(I, xp[xi + 1]).reinterpretAsShorts()))
                        .add(v.lanewise(VectorOperators.LSHR, 8).and((short) 0xF).mul(IntVector.broadcast(I, xp[xi + 2]).reinterpretAsShorts()))
                        .add(v.lanewise(VectorOperators.LSHR, 12).mul(IntVector.broadcast(I, xp[xi + 3]).reinterpretAsShorts()));
                v = ShortVector.fromMemorySegment(S2, w, p + 4L * GROUP, LE);
                s = s.add(v.and((short) 0xF).mul(IntVector.broadcast(I, xp[xi + 4]).reinterpretAsShorts()))
                        .add(v.lanewise(VectorOperators.LSHR, 4).and((short) 0xF).mul(IntVector.broadcast(I, xp[xi + 5]).reinterpretAsShorts()))
                        .add(v.lanewise(VectorOperators.LSHR, 8).and((short) 0xF).mul(IntVector.broadcast(I, xp[xi + 6]).reinterpretAsShorts()))
                        .add(v.lanewise(VectorOperators.LSHR, 12).mul(IntVector.broadcast(I, xp[xi + 7]).reinterpretAsShorts()));
                v = ShortVector.fromMemorySegment(S2, w, p + 8L * GROUP, LE);
                s = s.add(v.and((short) 0xF).mul(IntVector.broadcast(I, xp[xi + 8]).reinterpretAsShorts()))
                        .add(v.lanewise(VectorOperators.LSHR, 4).and((short) 0xF).mul(IntVector.broadcast(I, xp[xi + 9]).reinterpretAsShorts()))
                        .add(v.lanewise(VectorOperators.LSHR, 8).and((short) 0xF).mul(IntVector.broadcast(I, xp[xi + 10]).reinterpretAsShorts()))
                        .add(v.lanewise(VectorOperators.LSHR, 12).mul(IntVector.broadcast(I, xp[xi + 11]).reinterpretAsShorts()));
                v = ShortVector.fromMemorySegment(S2, w, p + 12L * GROUP, LE);
                s = s.add(v.and((short) 0xF).mul(IntVector.broadcast(I, xp[xi + 12]).reinterpretAsShorts()))
                        .add(v.lanewise(VectorOperators.LSHR, 4).and((short) 0xF).mul(IntVector.broadcast(I, xp[xi + 13]).reinterpretAsShorts()))
                        .add(v.lanewise(VectorOperators.LSHR, 8).and((short) 0xF).mul(IntVector.broadcast(I, xp[xi + 14]).reinterpretAsShorts()))
                        .add(v.lanewise(VectorOperators.LSHR, 12).mul(IntVector.broadcast(I, xp[xi + 15]).reinterpretAsShorts()));
                IntVector halves = s.reinterpretAsInts();
                IntVector sum = halves.add(halves.lanewise(VectorOperators.LSHL, 16)).lanewise(VectorOperators.ASHR, 16);
                // the scales as #SCALES says, written out: a helper returning a vector was not inlined here
                IntVector h = (IntVector) ShortVector.fromMemorySegment(S, w, p - 2L * GROUP, LE).convertShape(VectorOperators.S2I, I, 0);
                FloatVector d = h.lanewise(VectorOperators.LSHL, 13).and(0x8FFFE000).reinterpretAsFloats().mul(0x1p112f);
                acc = ((FloatVector) sum.convert(VectorOperators.I2F, 0)).fma(d.mul(xd[b]), acc);
            }
            acc.intoArray(out, outOff + g * GROUP);
        }
    }

    /**
     * {@link #groups} for two activation rows at once ({@code xp}/{@code xd}/{@code xoff} to
     * {@code out} at {@code outOff}, {@code yp}/{@code yd}/{@code yoff} to {@code outB} at
     * {@code outOffB}): each weight vector is loaded and split into its nibbles once for both; each
     * row's arithmetic and order are {@link #groups}' (the same bits). Written out as
     * {@link #groups} is (a helper returning a vector would be boxed).
     */
    static void groups2(MemorySegment w, int nb, int gFrom, int gTo, int[] xp, float[] xd, int[] xoff, float[] out, int outOff,
                        int[] yp, float[] yd, int[] yoff, float[] outB, int outOffB) {
        for (int g = gFrom; g < gTo; g++) {
            long base = (long) g * nb * BLOCK_BYTES;
            FloatVector acc = FloatVector.zero(F);
            FloatVector accB = acc;
            for (int b = 0; b < nb; b++) {
                long p = base + b * BLOCK_BYTES + 2L * GROUP;
                int xi = 16 * b;
                ShortVector s = IntVector.broadcast(I, xoff[b]).reinterpretAsShorts();
                ShortVector t = IntVector.broadcast(I, yoff[b]).reinterpretAsShorts();
                ShortVector v = ShortVector.fromMemorySegment(S2, w, p, LE);
                ShortVector n0 = v.and((short) 0xF);
                ShortVector n1 = v.lanewise(VectorOperators.LSHR, 4).and((short) 0xF);
                ShortVector n2 = v.lanewise(VectorOperators.LSHR, 8).and((short) 0xF);
                ShortVector n3 = v.lanewise(VectorOperators.LSHR, 12);
                s = s.add(n0.mul(IntVector.broadcast(I, xp[xi + 0]).reinterpretAsShorts()))
                        .add(n1.mul(IntVector.broadcast(I, xp[xi + 1]).reinterpretAsShorts()))
                        .add(n2.mul(IntVector.broadcast(I, xp[xi + 2]).reinterpretAsShorts()))
                        .add(n3.mul(IntVector.broadcast(I, xp[xi + 3]).reinterpretAsShorts()));
                t = t.add(n0.mul(IntVector.broadcast(I, yp[xi + 0]).reinterpretAsShorts()))
                        .add(n1.mul(IntVector.broadcast(I, yp[xi + 1]).reinterpretAsShorts()))
                        .add(n2.mul(IntVector.broadcast(I, yp[xi + 2]).reinterpretAsShorts()))
                        .add(n3.mul(IntVector.broadcast(I, yp[xi + 3]).reinterpretAsShorts()));
                v = ShortVector.fromMemorySegment(S2, w, p + 4L * GROUP, LE);
                n0 = v.and((short) 0xF);
                n1 = v.lanewise(VectorOperators.LSHR, 4).and((short) 0xF);
                n2 = v.lanewise(VectorOperators.LSHR, 8).and((short) 0xF);
                n3 = v.lanewise(VectorOperators.LSHR, 12);
                s = s.add(n0.mul(IntVector.broadcast(I, xp[xi + 4]).reinterpretAsShorts()))
                        .add(n1.mul(IntVector.broadcast(I, xp[xi + 5]).reinterpretAsShorts()))
                        .add(n2.mul(IntVector.broadcast(I, xp[xi + 6]).reinterpretAsShorts()))
                        .add(n3.mul(IntVector.broadcast(I, xp[xi + 7]).reinterpretAsShorts()));
                t = t.add(n0.mul(IntVector.broadcast(I, yp[xi + 4]).reinterpretAsShorts()))
                        .add(n1.mul(IntVector.broadcast(I, yp[xi + 5]).reinterpretAsShorts()))
                        .add(n2.mul(IntVector.broadcast(I, yp[xi + 6]).reinterpretAsShorts()))
                        .add(n3.mul(IntVector.broadcast(I, yp[xi + 7]).reinterpretAsShorts()));
                v = ShortVector.fromMemorySegment(S2, w, p + 8L * GROUP, LE);
                n0 = v.and((short) 0xF);
                n1 = v.lanewise(VectorOperators.LSHR, 4).and((short) 0xF);
                n2 = v.lanewise(VectorOperators.LSHR, 8).and((short) 0xF);
                n3 = v.lanewise(VectorOperators.LSHR, 12);
                s = s.add(n0.mul(IntVector.broadcast(I, xp[xi + 8]).reinterpretAsShorts()))
                        .add(n1.mul(IntVector.broadcast(I, xp[xi + 9]).reinterpretAsShorts()))
                        .add(n2.mul(IntVector.broadcast(I, xp[xi + 10]).reinterpretAsShorts()))
                        .add(n3.mul(IntVector.broadcast(I, xp[xi + 11]).reinterpretAsShorts()));
                t = t.add(n0.mul(IntVector.broadcast(I, yp[xi + 8]).reinterpretAsShorts()))
                        .add(n1.mul(IntVector.broadcast(I, yp[xi + 9]).reinterpretAsShorts()))
                        .add(n2.mul(IntVector.broadcast(I, yp[xi + 10]).reinterpretAsShorts()))
                        .add(n3.mul(IntVector.broadcast(I, yp[xi + 11]).reinterpretAsShorts()));
                v = ShortVector.fromMemorySegment(S2, w, p + 12L * GROUP, LE);
                n0 = v.and((short) 0xF);
                n1 = v.lanewise(VectorOperators.LSHR, 4).and((short) 0xF);
                n2 = v.lanewise(VectorOperators.LSHR, 8).and((short) 0xF);
                n3 = v.lanewise(VectorOperators.LSHR, 12);
                s = s.add(n0.mul(IntVector.broadcast(I, xp[xi + 12]).reinterpretAsShorts()))
                        .add(n1.mul(IntVector.broadcast(I, xp[xi + 13]).reinterpretAsShorts()))
                        .add(n2.mul(IntVector.broadcast(I, xp[xi + 14]).reinterpretAsShorts()))
                        .add(n3.mul(IntVector.broadcast(I, xp[xi + 15]).reinterpretAsShorts()));
                t = t.add(n0.mul(IntVector.broadcast(I, yp[xi + 12]).reinterpretAsShorts()))
                        .add(n1.mul(IntVector.broadcast(I, yp[xi + 13]).reinterpretAsShorts()))
                        .add(n2.mul(IntVector.broadcast(I, yp[xi + 14]).reinterpretAsShorts()))
                        .add(n3.mul(IntVector.broadcast(I, yp[xi + 15]).reinterpretAsShorts()));
                IntVector h = (IntVector) ShortVector.fromMemorySegment(S, w, p - 2L * GROUP, LE).convertShape(VectorOperators.S2I, I, 0);
                FloatVector d = h.lanewise(VectorOperators.LSHL, 13).and(0x8FFFE000).reinterpretAsFloats().mul(0x1p112f);
                IntVector halves = s.reinterpretAsInts();
                IntVector sum = halves.add(halves.lanewise(VectorOperators.LSHL, 16)).lanewise(VectorOperators.ASHR, 16);
                acc = ((FloatVector) sum.convert(VectorOperators.I2F, 0)).fma(d.mul(xd[b]), acc);
                halves = t.reinterpretAsInts();
                sum = halves.add(halves.lanewise(VectorOperators.LSHL, 16)).lanewise(VectorOperators.ASHR, 16);
                accB = ((FloatVector) sum.convert(VectorOperators.I2F, 0)).fma(d.mul(yd[b]), accB);
            }
            acc.intoArray(out, outOff + g * GROUP);
            accB.intoArray(outB, outOffB + g * GROUP);
        }
    }

    /**
     * Decodes the group at byte {@code base} ({@code nb} blocks) into {@code tile[tileOff + c * GROUP + r]}
     * = value {@code c} of the group's row {@code r}: per block 4 vectors of the layout's paired
     * lanes read as {@code GROUP} ints (int lane r = row r's values {@code 8m .. 8m+7}, one nibble
     * each), each nibble shifted out by a constant, masked, offset by 8, converted and scaled by
     * its row's {@code d} (made as {@link Interleaved#SCALES} says). The 8 nibbles are written out: a loop
     * over them shifted by a variable count, which C2 did not unroll.
     */
    static void decodeGroup(MemorySegment w, long base, int nb, float[] tile, int tileOff) {
        for (int b = 0; b < nb; b++) {
            long p = base + b * BLOCK_BYTES;
            IntVector h = (IntVector) ShortVector.fromMemorySegment(S, w, p, LE).convertShape(VectorOperators.S2I, I, 0);
            FloatVector d = h.lanewise(VectorOperators.LSHL, 13).and(0x8FFFE000).reinterpretAsFloats().mul(0x1p112f);
            int o = tileOff + 32 * b * GROUP;
            for (int m = 0; m < 4; m++) {
                IntVector v = IntVector.fromMemorySegment(I, w, p + 2L * GROUP + 4L * GROUP * m, LE);
                int at = o + 8 * m * GROUP;
                ((FloatVector) v.and(0xF).sub(8).convert(VectorOperators.I2F, 0)).mul(d).intoArray(tile, at);
                ((FloatVector) v.lanewise(VectorOperators.LSHR, 4).and(0xF).sub(8).convert(VectorOperators.I2F, 0)).mul(d).intoArray(tile, at + GROUP);
                ((FloatVector) v.lanewise(VectorOperators.LSHR, 8).and(0xF).sub(8).convert(VectorOperators.I2F, 0)).mul(d).intoArray(tile, at + 2 * GROUP);
                ((FloatVector) v.lanewise(VectorOperators.LSHR, 12).and(0xF).sub(8).convert(VectorOperators.I2F, 0)).mul(d).intoArray(tile, at + 3 * GROUP);
                ((FloatVector) v.lanewise(VectorOperators.LSHR, 16).and(0xF).sub(8).convert(VectorOperators.I2F, 0)).mul(d).intoArray(tile, at + 4 * GROUP);
                ((FloatVector) v.lanewise(VectorOperators.LSHR, 20).and(0xF).sub(8).convert(VectorOperators.I2F, 0)).mul(d).intoArray(tile, at + 5 * GROUP);
                ((FloatVector) v.lanewise(VectorOperators.LSHR, 24).and(0xF).sub(8).convert(VectorOperators.I2F, 0)).mul(d).intoArray(tile, at + 6 * GROUP);
                ((FloatVector) v.lanewise(VectorOperators.LSHR, 28).sub(8).convert(VectorOperators.I2F, 0)).mul(d).intoArray(tile, at + 7 * GROUP);
            }
        }
    }
}

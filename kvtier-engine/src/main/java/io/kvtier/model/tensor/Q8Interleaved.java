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
 * The Q8_0 quants of {@link Interleaved}'s layout and its kernels: after a block's {@code GROUP}
 * scales, 8 vectors of {@code 4 GROUP} bytes; vector {@code k} holds, per row r at bytes
 * {@code 4r .. 4r+3}, the block's values {@code 4k, 4k+2, 4k+1, 4k+3} ({@link #byteAt}). Read as
 * {@code 2 GROUP} shorts, a vector's low bytes (sign-extended by {@code << 8, >> 8}: values
 * {@code 4k, 4k+1} in lanes {@code 2r, 2r+1}) meet the activation pair {@code (4k, 4k+1)}
 * broadcast as one int, its high bytes ({@code >> 8}: values {@code 4k+2, 4k+3}) the pair
 * {@code (4k+2, 4k+3)} ({@link Q8Activations#adjacent}). So int lane r of a vector's products
 * sums row r's four products of values {@code 4k .. 4k+3}: int32 lane k of llama.cpp's
 * {@code ggml_vec_dot_q8_0_q8_0} (AVX2), which the kernel then scales and adds in that order.
 *
 * <p>Overflow: a product of an int8 weight and an activation quant is at most
 * {@code 128 * 127 = 16256} in magnitude, so a short lane holds the sum of its two products
 * (at most 32512); a row's two lanes together do not fit a short, so each is sign-extended on its
 * own ({@code << 16, >> 16} and {@code >> 16} on the ints) and the two added as ints.
 */
final class Q8Interleaved {

    private static final int GROUP = Interleaved.GROUP;
    /** Bytes of one block of a whole group. */
    static final long BLOCK_BYTES = Interleaved.blockBytes(TensorType.Q8_0);
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    /** {@code 2 GROUP} shorts: one quant vector of the layout, the shape of {@code GROUP} ints. */
    private static final VectorSpecies<Short> S2 = L == 16 ? ShortVector.SPECIES_512 : ShortVector.SPECIES_256;

    private Q8Interleaved() {
    }

    /**
     * Byte index, from the start of a group's block, of value {@code j} (0..31) of the group's row
     * {@code r}: vector {@code k = j / 4}, byte {@code 4r} value {@code 4k} (low byte of short
     * lane 2r), {@code 4r + 1} value {@code 4k + 2} (its high byte), {@code 4r + 2} value
     * {@code 4k + 1} and {@code 4r + 3} value {@code 4k + 3} (short lane 2r+1).
     */
    static int byteAt(int r, int j) {
        int u = j & 3;
        return 2 * GROUP + (j >> 2) * 4 * GROUP + 4 * r + ((u & 1) << 1) + (u >> 1);
    }

    /** Writes row {@code r}'s 32 quants of one block ({@code src[qs..qs+31]}) into the group's block at {@code dst[d..]}. */
    static void packQuants(byte[] src, int qs, byte[] dst, int d, int r) {
        for (int j = 0; j < 32; j++) {
            dst[d + byteAt(r, j)] = src[qs + j];
        }
    }

    /** Writes the 32 values {@code q * d} of the group's row {@code lane} in the block at byte {@code p} of {@code w} to {@code dst[o..]}. */
    static void decodeQuants(MemorySegment w, long p, int lane, float d, float[] dst, int o) {
        for (int j = 0; j < 32; j++) {
            dst[o + j] = w.get(ValueLayout.JAVA_BYTE, p + byteAt(lane, j)) * d;
        }
    }

    /**
     * Groups {@code gFrom..gTo-1} against one activation row ({@code xa}, {@code xd}: its
     * {@link Q8Activations#adjacent} pairs and scales): group g's {@code GROUP} dot products into
     * {@code out[outOff + g*GROUP ..]}. Per block: the {@code GROUP} scales made floats from their
     * half bits ({@link Interleaved#SCALES}) times the block's activation scale; 8 loads of
     * {@code 2 GROUP} shorts, each split into its low and high bytes, each multiplied by an
     * activation pair broadcast as one int and the two added in shorts; each int lane's two
     * shorts sign-extended and added, converted, and added by one FMA into accumulator k of 8. The
     * 8 accumulators are added at the end as llama.cpp's {@code hsum_float_8} adds its lanes.
     * Written out: a helper returning a vector is boxed when C2 does not inline it into a kernel
     * this large.
     */
    static void groups(MemorySegment w, int nb, int gFrom, int gTo, int[] xa, float[] xd, float[] out, int outOff) {
        for (int g = gFrom; g < gTo; g++) {
            long base = (long) g * nb * BLOCK_BYTES;
            FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
            for (int b = 0; b < nb; b++) {
                long p = base + b * BLOCK_BYTES + 2L * GROUP;
                int xi = 16 * b;
                // the GROUP scales as Interleaved#SCALES says, times the block's activation scale
                IntVector h = (IntVector) ShortVector.fromMemorySegment(S, w, p - 2L * GROUP, LE).convertShape(VectorOperators.S2I, I, 0);
                FloatVector d = h.lanewise(VectorOperators.LSHL, 13).and(0x8FFFE000).reinterpretAsFloats().mul(0x1p112f).mul(xd[b]);
                ShortVector v = ShortVector.fromMemorySegment(S2, w, p, LE);
                ShortVector s = v.lanewise(VectorOperators.LSHL, 8).lanewise(VectorOperators.ASHR, 8).mul(IntVector.broadcast(I, xa[xi]).reinterpretAsShorts())
                        .add(v.lanewise(VectorOperators.ASHR, 8).mul(IntVector.broadcast(I, xa[xi + 1]).reinterpretAsShorts()));
                IntVector si = s.reinterpretAsInts();
                a0 = ((FloatVector) si.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(si.lanewise(VectorOperators.ASHR, 16))
                        .convert(VectorOperators.I2F, 0)).fma(d, a0);
                v = ShortVector.fromMemorySegment(S2, w, p + 4L * GROUP, LE);
                s = v.lanewise(VectorOperators.LSHL, 8).lanewise(VectorOperators.ASHR, 8).mul(IntVector.broadcast(I, xa[xi + 2]).reinterpretAsShorts())
                        .add(v.lanewise(VectorOperators.ASHR, 8).mul(IntVector.broadcast(I, xa[xi + 3]).reinterpretAsShorts()));
                si = s.reinterpretAsInts();
                a1 = ((FloatVector) si.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(si.lanewise(VectorOperators.ASHR, 16))
                        .convert(VectorOperators.I2F, 0)).fma(d, a1);
                v = ShortVector.fromMemorySegment(S2, w, p + 8L * GROUP, LE);
                s = v.lanewise(VectorOperators.LSHL, 8).lanewise(VectorOperators.ASHR, 8).mul(IntVector.broadcast(I, xa[xi + 4]).reinterpretAsShorts())
                        .add(v.lanewise(VectorOperators.ASHR, 8).mul(IntVector.broadcast(I, xa[xi + 5]).reinterpretAsShorts()));
                si = s.reinterpretAsInts();
                a2 = ((FloatVector) si.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(si.lanewise(VectorOperators.ASHR, 16))
                        .convert(VectorOperators.I2F, 0)).fma(d, a2);
                v = ShortVector.fromMemorySegment(S2, w, p + 12L * GROUP, LE);
                s = v.lanewise(VectorOperators.LSHL, 8).lanewise(VectorOperators.ASHR, 8).mul(IntVector.broadcast(I, xa[xi + 6]).reinterpretAsShorts())
                        .add(v.lanewise(VectorOperators.ASHR, 8).mul(IntVector.broadcast(I, xa[xi + 7]).reinterpretAsShorts()));
                si = s.reinterpretAsInts();
                a3 = ((FloatVector) si.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(si.lanewise(VectorOperators.ASHR, 16))
                        .convert(VectorOperators.I2F, 0)).fma(d, a3);
                v = ShortVector.fromMemorySegment(S2, w, p + 16L * GROUP, LE);
                s = v.lanewise(VectorOperators.LSHL, 8).lanewise(VectorOperators.ASHR, 8).mul(IntVector.broadcast(I, xa[xi + 8]).reinterpretAsShorts())
                        .add(v.lanewise(VectorOperators.ASHR, 8).mul(IntVector.broadcast(I, xa[xi + 9]).reinterpretAsShorts()));
                si = s.reinterpretAsInts();
                a4 = ((FloatVector) si.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(si.lanewise(VectorOperators.ASHR, 16))
                        .convert(VectorOperators.I2F, 0)).fma(d, a4);
                v = ShortVector.fromMemorySegment(S2, w, p + 20L * GROUP, LE);
                s = v.lanewise(VectorOperators.LSHL, 8).lanewise(VectorOperators.ASHR, 8).mul(IntVector.broadcast(I, xa[xi + 10]).reinterpretAsShorts())
                        .add(v.lanewise(VectorOperators.ASHR, 8).mul(IntVector.broadcast(I, xa[xi + 11]).reinterpretAsShorts()));
                si = s.reinterpretAsInts();
                a5 = ((FloatVector) si.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(si.lanewise(VectorOperators.ASHR, 16))
                        .convert(VectorOperators.I2F, 0)).fma(d, a5);
                v = ShortVector.fromMemorySegment(S2, w, p + 24L * GROUP, LE);
                s = v.lanewise(VectorOperators.LSHL, 8).lanewise(VectorOperators.ASHR, 8).mul(IntVector.broadcast(I, xa[xi + 12]).reinterpretAsShorts())
                        .add(v.lanewise(VectorOperators.ASHR, 8).mul(IntVector.broadcast(I, xa[xi + 13]).reinterpretAsShorts()));
                si = s.reinterpretAsInts();
                a6 = ((FloatVector) si.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(si.lanewise(VectorOperators.ASHR, 16))
                        .convert(VectorOperators.I2F, 0)).fma(d, a6);
                v = ShortVector.fromMemorySegment(S2, w, p + 28L * GROUP, LE);
                s = v.lanewise(VectorOperators.LSHL, 8).lanewise(VectorOperators.ASHR, 8).mul(IntVector.broadcast(I, xa[xi + 14]).reinterpretAsShorts())
                        .add(v.lanewise(VectorOperators.ASHR, 8).mul(IntVector.broadcast(I, xa[xi + 15]).reinterpretAsShorts()));
                si = s.reinterpretAsInts();
                a7 = ((FloatVector) si.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(si.lanewise(VectorOperators.ASHR, 16))
                        .convert(VectorOperators.I2F, 0)).fma(d, a7);
            }
            // llama.cpp's hsum_float_8 order: (a0 + a4) + (a2 + a6), (a1 + a5) + (a3 + a7), then the two
            a0.add(a4).add(a2.add(a6)).add(a1.add(a5).add(a3.add(a7))).intoArray(out, outOff + g * GROUP);
        }
    }

    /**
     * {@link #groups} for two activation rows at once ({@code xa}/{@code xd} to {@code out} at
     * {@code outOff}, {@code xb}/{@code xe} to {@code outB} at {@code outOffB}): each weight vector
     * is loaded and split into its byte halves once for both, each row's arithmetic and order are
     * {@link #groups}' (the same bits). For prefill and batches, where every product meets many rows.
     * Written out as {@link #groups} is: with a helper for a row's vector step, C2 boxed the
     * vectors (prefill 10x slower).
     */
    static void groups2(MemorySegment w, int nb, int gFrom, int gTo, int[] xa, float[] xd, float[] out, int outOff,
                        int[] xb, float[] xe, float[] outB, int outOffB) {
        for (int g = gFrom; g < gTo; g++) {
            long base = (long) g * nb * BLOCK_BYTES;
            FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
            FloatVector b0 = a0, b1 = a0, b2 = a0, b3 = a0, b4 = a0, b5 = a0, b6 = a0, b7 = a0;
            for (int b = 0; b < nb; b++) {
                long p = base + b * BLOCK_BYTES + 2L * GROUP;
                int xi = 16 * b;
                IntVector h = (IntVector) ShortVector.fromMemorySegment(S, w, p - 2L * GROUP, LE).convertShape(VectorOperators.S2I, I, 0);
                FloatVector dw = h.lanewise(VectorOperators.LSHL, 13).and(0x8FFFE000).reinterpretAsFloats().mul(0x1p112f);
                FloatVector d = dw.mul(xd[b]);
                FloatVector e = dw.mul(xe[b]);
                ShortVector v = ShortVector.fromMemorySegment(S2, w, p, LE);
                ShortVector lo = v.lanewise(VectorOperators.LSHL, 8).lanewise(VectorOperators.ASHR, 8);
                ShortVector hi = v.lanewise(VectorOperators.ASHR, 8);
                IntVector si;
                si = lo.mul(IntVector.broadcast(I, xa[xi + 0]).reinterpretAsShorts()).add(hi.mul(IntVector.broadcast(I, xa[xi + 1]).reinterpretAsShorts())).reinterpretAsInts();
                a0 = ((FloatVector) si.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(si.lanewise(VectorOperators.ASHR, 16))
                        .convert(VectorOperators.I2F, 0)).fma(d, a0);
                si = lo.mul(IntVector.broadcast(I, xb[xi + 0]).reinterpretAsShorts()).add(hi.mul(IntVector.broadcast(I, xb[xi + 1]).reinterpretAsShorts())).reinterpretAsInts();
                b0 = ((FloatVector) si.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(si.lanewise(VectorOperators.ASHR, 16))
                        .convert(VectorOperators.I2F, 0)).fma(e, b0);
                v = ShortVector.fromMemorySegment(S2, w, p + 4L * GROUP, LE);
                lo = v.lanewise(VectorOperators.LSHL, 8).lanewise(VectorOperators.ASHR, 8);
                hi = v.lanewise(VectorOperators.ASHR, 8);
                si = lo.mul(IntVector.broadcast(I, xa[xi + 2]).reinterpretAsShorts()).add(hi.mul(IntVector.broadcast(I, xa[xi + 3]).reinterpretAsShorts())).reinterpretAsInts();
                a1 = ((FloatVector) si.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(si.lanewise(VectorOperators.ASHR, 16))
                        .convert(VectorOperators.I2F, 0)).fma(d, a1);
                si = lo.mul(IntVector.broadcast(I, xb[xi + 2]).reinterpretAsShorts()).add(hi.mul(IntVector.broadcast(I, xb[xi + 3]).reinterpretAsShorts())).reinterpretAsInts();
                b1 = ((FloatVector) si.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(si.lanewise(VectorOperators.ASHR, 16))
                        .convert(VectorOperators.I2F, 0)).fma(e, b1);
                v = ShortVector.fromMemorySegment(S2, w, p + 8L * GROUP, LE);
                lo = v.lanewise(VectorOperators.LSHL, 8).lanewise(VectorOperators.ASHR, 8);
                hi = v.lanewise(VectorOperators.ASHR, 8);
                si = lo.mul(IntVector.broadcast(I, xa[xi + 4]).reinterpretAsShorts()).add(hi.mul(IntVector.broadcast(I, xa[xi + 5]).reinterpretAsShorts())).reinterpretAsInts();
                a2 = ((FloatVector) si.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(si.lanewise(VectorOperators.ASHR, 16))
                        .convert(VectorOperators.I2F, 0)).fma(d, a2);
                si = lo.mul(IntVector.broadcast(I, xb[xi + 4]).reinterpretAsShorts()).add(hi.mul(IntVector.broadcast(I, xb[xi + 5]).reinterpretAsShorts())).reinterpretAsInts();
                b2 = ((FloatVector) si.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(si.lanewise(VectorOperators.ASHR, 16))
                        .convert(VectorOperators.I2F, 0)).fma(e, b2);
                v = ShortVector.fromMemorySegment(S2, w, p + 12L * GROUP, LE);
                lo = v.lanewise(VectorOperators.LSHL, 8).lanewise(VectorOperators.ASHR, 8);
                hi = v.lanewise(VectorOperators.ASHR, 8);
                si = lo.mul(IntVector.broadcast(I, xa[xi + 6]).reinterpretAsShorts()).add(hi.mul(IntVector.broadcast(I, xa[xi + 7]).reinterpretAsShorts())).reinterpretAsInts();
                a3 = ((FloatVector) si.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(si.lanewise(VectorOperators.ASHR, 16))
                        .convert(VectorOperators.I2F, 0)).fma(d, a3);
                si = lo.mul(IntVector.broadcast(I, xb[xi + 6]).reinterpretAsShorts()).add(hi.mul(IntVector.broadcast(I, xb[xi + 7]).reinterpretAsShorts())).reinterpretAsInts();
                b3 = ((FloatVector) si.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(si.lanewise(VectorOperators.ASHR, 16))
                        .convert(VectorOperators.I2F, 0)).fma(e, b3);
                v = ShortVector.fromMemorySegment(S2, w, p + 16L * GROUP, LE);
                lo = v.lanewise(VectorOperators.LSHL, 8).lanewise(VectorOperators.ASHR, 8);
                hi = v.lanewise(VectorOperators.ASHR, 8);
                si = lo.mul(IntVector.broadcast(I, xa[xi + 8]).reinterpretAsShorts()).add(hi.mul(IntVector.broadcast(I, xa[xi + 9]).reinterpretAsShorts())).reinterpretAsInts();
                a4 = ((FloatVector) si.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(si.lanewise(VectorOperators.ASHR, 16))
                        .convert(VectorOperators.I2F, 0)).fma(d, a4);
                si = lo.mul(IntVector.broadcast(I, xb[xi + 8]).reinterpretAsShorts()).add(hi.mul(IntVector.broadcast(I, xb[xi + 9]).reinterpretAsShorts())).reinterpretAsInts();
                b4 = ((FloatVector) si.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(si.lanewise(VectorOperators.ASHR, 16))
                        .convert(VectorOperators.I2F, 0)).fma(e, b4);
                v = ShortVector.fromMemorySegment(S2, w, p + 20L * GROUP, LE);
                lo = v.lanewise(VectorOperators.LSHL, 8).lanewise(VectorOperators.ASHR, 8);
                hi = v.lanewise(VectorOperators.ASHR, 8);
                si = lo.mul(IntVector.broadcast(I, xa[xi + 10]).reinterpretAsShorts()).add(hi.mul(IntVector.broadcast(I, xa[xi + 11]).reinterpretAsShorts())).reinterpretAsInts();
                a5 = ((FloatVector) si.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(si.lanewise(VectorOperators.ASHR, 16))
                        .convert(VectorOperators.I2F, 0)).fma(d, a5);
                si = lo.mul(IntVector.broadcast(I, xb[xi + 10]).reinterpretAsShorts()).add(hi.mul(IntVector.broadcast(I, xb[xi + 11]).reinterpretAsShorts())).reinterpretAsInts();
                b5 = ((FloatVector) si.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(si.lanewise(VectorOperators.ASHR, 16))
                        .convert(VectorOperators.I2F, 0)).fma(e, b5);
                v = ShortVector.fromMemorySegment(S2, w, p + 24L * GROUP, LE);
                lo = v.lanewise(VectorOperators.LSHL, 8).lanewise(VectorOperators.ASHR, 8);
                hi = v.lanewise(VectorOperators.ASHR, 8);
                si = lo.mul(IntVector.broadcast(I, xa[xi + 12]).reinterpretAsShorts()).add(hi.mul(IntVector.broadcast(I, xa[xi + 13]).reinterpretAsShorts())).reinterpretAsInts();
                a6 = ((FloatVector) si.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(si.lanewise(VectorOperators.ASHR, 16))
                        .convert(VectorOperators.I2F, 0)).fma(d, a6);
                si = lo.mul(IntVector.broadcast(I, xb[xi + 12]).reinterpretAsShorts()).add(hi.mul(IntVector.broadcast(I, xb[xi + 13]).reinterpretAsShorts())).reinterpretAsInts();
                b6 = ((FloatVector) si.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(si.lanewise(VectorOperators.ASHR, 16))
                        .convert(VectorOperators.I2F, 0)).fma(e, b6);
                v = ShortVector.fromMemorySegment(S2, w, p + 28L * GROUP, LE);
                lo = v.lanewise(VectorOperators.LSHL, 8).lanewise(VectorOperators.ASHR, 8);
                hi = v.lanewise(VectorOperators.ASHR, 8);
                si = lo.mul(IntVector.broadcast(I, xa[xi + 14]).reinterpretAsShorts()).add(hi.mul(IntVector.broadcast(I, xa[xi + 15]).reinterpretAsShorts())).reinterpretAsInts();
                a7 = ((FloatVector) si.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(si.lanewise(VectorOperators.ASHR, 16))
                        .convert(VectorOperators.I2F, 0)).fma(d, a7);
                si = lo.mul(IntVector.broadcast(I, xb[xi + 14]).reinterpretAsShorts()).add(hi.mul(IntVector.broadcast(I, xb[xi + 15]).reinterpretAsShorts())).reinterpretAsInts();
                b7 = ((FloatVector) si.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(si.lanewise(VectorOperators.ASHR, 16))
                        .convert(VectorOperators.I2F, 0)).fma(e, b7);
            }
            a0.add(a4).add(a2.add(a6)).add(a1.add(a5).add(a3.add(a7))).intoArray(out, outOff + g * GROUP);
            b0.add(b4).add(b2.add(b6)).add(b1.add(b5).add(b3.add(b7))).intoArray(outB, outOffB + g * GROUP);
        }
    }

    /**
     * Decodes the group at byte {@code base} ({@code nb} blocks) into {@code tile[tileOff + c * GROUP + r]}
     * = value {@code c} of the group's row {@code r}: per block 8 vectors read as {@code GROUP}
     * ints (int lane r = row r's four values of the vector, {@link #byteAt}), each byte
     * sign-extended by two shifts, converted and scaled by its row's {@code d}
     * ({@link Interleaved#SCALES}).
     */
    static void decodeGroup(MemorySegment w, long base, int nb, float[] tile, int tileOff) {
        for (int b = 0; b < nb; b++) {
            long p = base + b * BLOCK_BYTES;
            IntVector h = (IntVector) ShortVector.fromMemorySegment(S, w, p, LE).convertShape(VectorOperators.S2I, I, 0);
            FloatVector d = h.lanewise(VectorOperators.LSHL, 13).and(0x8FFFE000).reinterpretAsFloats().mul(0x1p112f);
            int o = tileOff + 32 * b * GROUP;
            for (int k = 0; k < 8; k++) {
                IntVector v = IntVector.fromMemorySegment(I, w, p + 2L * GROUP + 4L * GROUP * k, LE);
                int at = o + 4 * k * GROUP;   // values 4k, 4k+2, 4k+1, 4k+3 in bytes 0..3 of a lane
                ((FloatVector) v.lanewise(VectorOperators.LSHL, 24).lanewise(VectorOperators.ASHR, 24).convert(VectorOperators.I2F, 0)).mul(d).intoArray(tile, at);
                ((FloatVector) v.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 24).convert(VectorOperators.I2F, 0)).mul(d).intoArray(tile, at + 2 * GROUP);
                ((FloatVector) v.lanewise(VectorOperators.LSHL, 8).lanewise(VectorOperators.ASHR, 24).convert(VectorOperators.I2F, 0)).mul(d).intoArray(tile, at + GROUP);
                ((FloatVector) v.lanewise(VectorOperators.ASHR, 24).convert(VectorOperators.I2F, 0)).mul(d).intoArray(tile, at + 3 * GROUP);
            }
        }
    }
}

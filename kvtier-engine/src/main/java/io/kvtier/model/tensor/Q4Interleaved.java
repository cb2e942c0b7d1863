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
 * Q4_0 weights repacked {@value #NAME}: {@link #GROUP} rows interleaved so that one short vector
 * of {@code 2 GROUP} lanes (two lanes per row) holds eight values of every row of the group, and
 * the decode kernel {@link #matmul} multiplies them with Q8_0-quantized activations in 16-bit
 * integers, as llama.cpp's {@code ggml_vec_dot_q4_0_q8_0} computes (its plain references): per
 * block of 32 an exact integer sum {@code sum_j (q_j - 8) * x_j}, converted to float once and
 * added as {@code fma(sum, d_w * d_x, acc)}; only the float additions of the blocks' sums are in
 * a different order from llama.cpp (here per row, block after block). The layout follows the idea
 * of llama.cpp's {@code block_q4_0x4}/{@code x8} repacking (rows interleaved, nibbles
 * pre-arranged) in a form the Vector API can use: it has no int8 dot product, but 16-bit
 * multiplies and adds of 16 rows at once need no widening or float conversion per value.
 *
 * <p>Layout: rows {@code g*GROUP .. g*GROUP+GROUP-1} ("group g") and block {@code b} (values
 * {@code 32b .. 32b+31}) take {@value #BLOCK_BYTES_PER_ROW}{@code * GROUP} bytes at
 * {@code (g * cols/32 + b) * 18 * GROUP}: first the {@code GROUP} half-precision scales (lane r =
 * row {@code g*GROUP+r}), then 4 vectors of {@code 2 GROUP} little-endian shorts ("paired
 * lanes"): vector {@code m} lane {@code 2r} = the unsigned 4-bit quants of values
 * {@code 8m .. 8m+3} of row r's block in bits 0-3, 4-7, 8-11, 12-15, lane {@code 2r+1} those of
 * values {@code 8m+4 .. 8m+7} ({@link #shortAt}). So the two lanes of a row are one int lane, and
 * the activations a nibble vector meets are one pair per int, broadcast as a plain 32-bit value
 * ({@link Q8Activations#pairs}); as ints, a vector is also the float tile decode's input with no
 * widening ({@link Q4InterleavedTiles}). A group occupies exactly the bytes its rows occupied in
 * the file's row-major order, so {@link #repackInPlace} needs only one group of scratch.
 *
 * <p>Overflow: a short lane starts at {@code -8} times the sum of the 16 activation quants it
 * meets ({@link Q8Activations#offsets}) and adds the 16 products {@code q * x} (quants 0..15,
 * activation quants -127..127), so it ends at {@code sum (q - 8) x}, at most
 * {@code 16 * 8 * 127 = 16256} in magnitude (a partial sum may pass a short's range and wrap;
 * additions modulo 2^16 still end exact). A row's two lanes together are at most 32512, a
 * short as well, so each int lane folds its pair in 3 operations.
 *
 * <p>Scales: the kernels convert the halves with integer operations valid for finite values
 * only, so a matrix with an infinite or NaN scale is not repacked ({@link #finiteScales}); it
 * keeps its file layout and the float kernels, which carry such values as llama.cpp does.
 */
public final class Q4Interleaved {

    /** The layout's name in reports. */
    public static final String NAME = "q4_0 interleaved";
    /** Rows interleaved: the short (and float) lane count of the kernels. */
    public static final int GROUP = L;
    /** Bytes per row per block, as in Q4_0. */
    static final int BLOCK_BYTES_PER_ROW = 18;
    /** Bytes of one block of a whole group. */
    static final long BLOCK_BYTES = (long) BLOCK_BYTES_PER_ROW * GROUP;
    /** System property turning the repacking off ({@code false}), for A/B runs. */
    public static final String PROPERTY = "kvtier.quant.interleave";
    /** Whether models repack their Q4_0 weights at load ({@link #PROPERTY}, default true). */
    public static final boolean ENABLED = !"false".equalsIgnoreCase(System.getProperty(PROPERTY, "true").strip());

    /**
     * How the kernels make the {@code GROUP} half scales of a block floats, for finite halves only
     * (normal or subnormal; {@link #repackInPlace} refuses a matrix with others): each half
     * sign-extended to an int, shifted left 13 (sign, exponent and mantissa in a float's places),
     * masked to {@code 0x8FFFE000}, read as a float and multiplied by {@code 2^112}, which rebases
     * the exponent exactly and also normalises subnormal halves. Four operations after the load,
     * against eight with the blend that infinities and NaNs would need.
     */
    static final String SCALES = "<< 13, & 0x8FFFE000, * 2^112";
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(LE);
    /** {@code 2 GROUP} shorts: one nibble vector of the layout, the shape of {@code GROUP} ints. */
    private static final VectorSpecies<Short> S2 = L == 16 ? ShortVector.SPECIES_512 : ShortVector.SPECIES_256;

    private Q4Interleaved() {
    }

    /** Whether a Q4_0 matrix {@code [rows][cols]} can be repacked: whole groups of rows. */
    public static boolean fits(int rows, int cols) {
        return rows % GROUP == 0 && cols % 32 == 0;
    }

    /**
     * Rewrites the row-major Q4_0 matrix {@code [rows][cols]} in {@code seg} into this layout, in
     * place, one group at a time.
     *
     * @throws IllegalArgumentException when {@link #fits} refuses the shape, the size is wrong or
     *         a scale is infinite or NaN ({@link #finiteScales}; nothing is rewritten then)
     */
    public static void repackInPlace(MemorySegment seg, int rows, int cols) {
        long rowBytes = TensorType.Q4_0.rowBytes(cols);
        if (!fits(rows, cols) || seg.byteSize() != rowBytes * rows) {
            throw new IllegalArgumentException("cannot interleave a Q4_0 [" + rows + "][" + cols + "] of "
                    + seg.byteSize() + " bytes");
        }
        if (!finiteScales(seg, rows, cols)) {
            throw new IllegalArgumentException("cannot interleave a Q4_0 [" + rows + "][" + cols + "] with an infinite or NaN scale");
        }
        int nb = cols / 32;
        byte[] src = new byte[(int) (rowBytes * GROUP)];
        byte[] dst = new byte[src.length];
        for (int g = 0; g < rows / GROUP; g++) {
            long base = g * (long) src.length;
            MemorySegment.copy(seg, ValueLayout.JAVA_BYTE, base, src, 0, src.length);
            for (int r = 0; r < GROUP; r++) {
                for (int b = 0; b < nb; b++) {
                    int s = (int) (r * rowBytes) + 18 * b;
                    int d = (int) (b * BLOCK_BYTES);
                    dst[d + 2 * r] = src[s];
                    dst[d + 2 * r + 1] = src[s + 1];
                    for (int k = 0; k < 8; k++) {
                        int v = 0;
                        for (int t = 0; t < 4; t++) {
                            v |= nibble(src, s + 2, 4 * k + t) << (4 * t);
                        }
                        int at = d + 2 * shortAt(r, k);
                        dst[at] = (byte) v;
                        dst[at + 1] = (byte) (v >> 8);
                    }
                }
            }
            MemorySegment.copy(dst, 0, seg, ValueLayout.JAVA_BYTE, base, dst.length);
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

    /**
     * Decodes row {@code r} of the repacked {@code [rows][cols]} matrix {@code w} into
     * {@code dst[dstOff..dstOff+cols-1]}: the exact values {@code (q - 8) * d} of
     * {@link ScalarDequant} (prefill tiles, embedding lookups, float32 activations).
     */
    public static void decodeRow(MemorySegment w, int cols, int r, float[] dst, int dstOff) {
        int nb = cols / 32;
        int lane = r % GROUP;
        long base = (long) (r / GROUP) * nb * BLOCK_BYTES;
        for (int b = 0; b < nb; b++) {
            long p = base + b * BLOCK_BYTES;
            float d = Float.float16ToFloat(w.get(I16, p + 2L * lane));
            int o = dstOff + 32 * b;
            for (int k = 0; k < 8; k++) {
                int v = w.get(I16, p + 2L * shortAt(lane, k));
                dst[o + 4 * k] = ((v & 0xF) - 8) * d;
                dst[o + 4 * k + 1] = (((v >> 4) & 0xF) - 8) * d;
                dst[o + 4 * k + 2] = (((v >> 8) & 0xF) - 8) * d;
                dst[o + 4 * k + 3] = (((v >> 12) & 0xF) - 8) * d;
            }
        }
    }

    /** Groups a decode product takes at a time before the next activation row: about 55-150 KB of weights at the 110M shape's widths, which stay in L2 for the other rows. */
    static final int CHUNK_GROUPS = 128 / GROUP;

    /**
     * For output rows {@code rowFrom..rowTo-1} of the repacked {@code [rows][cols]} matrix
     * {@code w}: {@code y[i*rows + r] = sum_b d_w(r,b) d_x(i,b) sum_j (q_w(r,b,j) - 8) q_x(i,b,j)},
     * {@code i < n}, {@code x} quantized from {@code [n][cols]}. Whole groups are computed in
     * vectors, {@link #CHUNK_GROUPS} at a time for every activation row; a group cut by the range
     * is computed whole into scratch and only its rows in the range are stored, so every row gets
     * the same bits whatever the range.
     */
    public static void matmul(MemorySegment w, int rows, int cols, Q8Activations x, int n, float[] y, int rowFrom, int rowTo) {
        int nb = cols / 32;
        int gFirst = (rowFrom + GROUP - 1) / GROUP;   // the whole groups: gFirst .. gEnd-1
        int gEnd = rowTo / GROUP;
        for (int g = gFirst; g < gEnd; g += CHUNK_GROUPS) {
            int to = Math.min(gEnd, g + CHUNK_GROUPS);
            for (int i = 0; i < n; i++) {
                groups(w, nb, g, to, x.pairs[i], x.scales[i], x.offsets[i], y, i * rows);
            }
        }
        int cutLow = rowFrom / GROUP;
        int cutHigh = (rowTo - 1) / GROUP;
        if (cutLow * GROUP < rowFrom || gEnd <= gFirst) {   // a group cut at the start (or the range inside one group)
            cut(w, nb, cutLow, x, n, y, rows, rowFrom, rowTo);
        }
        if (cutHigh != cutLow && (cutHigh + 1) * GROUP > rowTo) {
            cut(w, nb, cutHigh, x, n, y, rows, rowFrom, rowTo);
        }
    }

    /** Group {@code g}, which the range cuts: computed whole into scratch, its rows in the range copied to {@code y}. */
    private static void cut(MemorySegment w, int nb, int g, Q8Activations x, int n, float[] y, int rows, int rowFrom, int rowTo) {
        float[] part = new float[GROUP];
        int r0 = g * GROUP;
        int lo = Math.max(rowFrom, r0);
        int hi = Math.min(rowTo, r0 + GROUP);
        for (int i = 0; i < n; i++) {
            groups(w, nb, g, g + 1, x.pairs[i], x.scales[i], x.offsets[i], part, -r0);
            System.arraycopy(part, lo - r0, y, i * rows + lo, hi - lo);
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
     * from their half bits ({@link #SCALES}), one FMA.
     */
    private static void groups(MemorySegment w, int nb, int gFrom, int gTo, int[] xp, float[] xd, int[] xoff,
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
     * Whether every half-precision scale of the row-major Q4_0 matrix {@code [rows][cols]} in
     * {@code seg} is finite (no infinity or NaN), which the repacked kernels' scale conversion
     * ({@link #SCALES}) needs.
     */
    public static boolean finiteScales(MemorySegment seg, int rows, int cols) {
        long blocks = (long) rows * (cols / 32);
        for (long k = 0; k < blocks; k++) {
            if ((seg.get(I16, 18 * k) & 0x7C00) == 0x7C00) {
                return false;
            }
        }
        return true;
    }
}

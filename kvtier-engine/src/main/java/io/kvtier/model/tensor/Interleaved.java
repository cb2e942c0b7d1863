package io.kvtier.model.tensor;

import static io.kvtier.model.tensor.QuantSpecies.L;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Q4_0 and Q8_0 matrices repacked for the decode kernels on Q8_0-quantized activations:
 * {@link #GROUP} rows interleaved so that one vector holds a few values of every row of the group,
 * multiplied with the activations in 16-bit integers, as llama.cpp's {@code ggml_vec_dot_q4_0_q8_0}
 * and {@code ggml_vec_dot_q8_0_q8_0} compute (their plain references): per block of 32 an exact
 * integer sum, converted to float once and added as {@code fma(sum, d_w * d_x, acc)}, per row
 * block after block (only the order of the float additions differs from llama.cpp). The idea is
 * llama.cpp's {@code block_q4_0x4}/{@code x8} repacking (rows interleaved, quants pre-arranged) in
 * a form the Vector API can use: it has no int8 dot product, but 16-bit multiplies and adds of
 * {@code GROUP} rows at once need no widening, float conversion or lane reduction per value, and
 * an accumulator's lanes are finished outputs.
 *
 * <p>Layout: rows {@code g*GROUP .. g*GROUP+GROUP-1} ("group g") and block {@code b} (values
 * {@code 32b .. 32b+31}) take the type's block bytes times {@code GROUP} at
 * {@code (g * cols/32 + b) * blockBytes * GROUP}: first the {@code GROUP} half-precision scales
 * (lane r = row {@code g*GROUP+r}), then the group's quants of the block in the type's
 * arrangement ({@link Q4Interleaved}, {@link Q8Interleaved}). A group occupies exactly the bytes
 * its rows occupied in the file's row-major order, so {@link #repackInPlace} needs only one group
 * of scratch.
 *
 * <p>Scales: the kernels convert the halves with integer operations valid for finite values
 * only ({@link #SCALES}), so a matrix with an infinite or NaN scale is not repacked
 * ({@link #finiteScales}); it keeps its file layout and the row kernels, which carry such values
 * as llama.cpp does.
 */
public final class Interleaved {

    /** Rows interleaved: the short (and float) lane count of the kernels. */
    public static final int GROUP = L;
    /** System property turning the repacking off ({@code false}), for A/B runs. */
    public static final String PROPERTY = "kvtier.quant.interleave";
    /** Whether models repack their Q4_0 and Q8_0 weights at load ({@link #PROPERTY}, default true). */
    public static final boolean ENABLED = !"false".equalsIgnoreCase(System.getProperty(PROPERTY, "true").strip());
    /**
     * How the kernels make the {@code GROUP} half scales of a block floats, for finite halves only
     * (normal or subnormal): each half sign-extended to an int, shifted left 13 (sign, exponent and
     * mantissa in a float's places), masked to {@code 0x8FFFE000}, read as a float and multiplied
     * by {@code 2^112}, which rebases the exponent exactly and also normalises subnormal halves.
     * Four operations after the load, against eight with the blend that infinities and NaNs need.
     */
    static final String SCALES = "<< 13, & 0x8FFFE000, * 2^112";
    /** Groups a decode product takes at a time before the next activation row: about 55-300 KB of weights at the 110M shape's widths, which stay in L2 for the other rows. */
    static final int CHUNK_GROUPS = 128 / GROUP;
    /** Products take activation rows two at a time ({@link Q8Interleaved#groups2}, {@link Q4Interleaved#groups2}); property {@code kvtier.quant.pairedRows=false} turns it off, for comparisons. */
    static final boolean PAIRED_ROWS = !"false".equals(System.getProperty("kvtier.quant.pairedRows"));
    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private Interleaved() {
    }

    /** Whether {@code type} has an interleaved layout: Q4_0 and Q8_0. */
    public static boolean supports(TensorType type) {
        return type == TensorType.Q4_0 || type == TensorType.Q8_0;
    }

    /** Whether a matrix {@code [rows][cols]} can be repacked: whole groups of rows. */
    public static boolean fits(int rows, int cols) {
        return rows % GROUP == 0 && cols % 32 == 0;
    }

    /** Bytes of one block (32 values) of a whole group of {@code type}. */
    static long blockBytes(TensorType type) {
        return (long) type.blockBytes() * GROUP;
    }

    /**
     * Rewrites the row-major {@code type} matrix {@code [rows][cols]} in {@code seg} into this
     * layout, in place, one group at a time.
     *
     * @throws IllegalArgumentException when the type has no layout here, {@link #fits} refuses the
     *         shape, the size is wrong or a scale is infinite or NaN ({@link #finiteScales};
     *         nothing is rewritten then)
     */
    public static void repackInPlace(TensorType type, MemorySegment seg, int rows, int cols) {
        long rowBytes = type.rowBytes(cols);
        if (!supports(type) || !fits(rows, cols) || seg.byteSize() != rowBytes * rows) {
            throw new IllegalArgumentException("cannot interleave a " + type + " [" + rows + "][" + cols + "] of "
                    + seg.byteSize() + " bytes");
        }
        if (!finiteScales(type, seg, rows, cols)) {
            throw new IllegalArgumentException("cannot interleave a " + type + " [" + rows + "][" + cols
                    + "] with an infinite or NaN scale");
        }
        int nb = cols / 32;
        int blockBytes = type.blockBytes();
        byte[] src = new byte[(int) (rowBytes * GROUP)];
        byte[] dst = new byte[src.length];
        for (int g = 0; g < rows / GROUP; g++) {
            long base = g * (long) src.length;
            MemorySegment.copy(seg, ValueLayout.JAVA_BYTE, base, src, 0, src.length);
            for (int r = 0; r < GROUP; r++) {
                for (int b = 0; b < nb; b++) {
                    int s = (int) (r * rowBytes) + blockBytes * b;
                    int d = (int) (b * blockBytes(type));
                    dst[d + 2 * r] = src[s];
                    dst[d + 2 * r + 1] = src[s + 1];
                    if (type == TensorType.Q4_0) {
                        Q4Interleaved.packQuants(src, s + 2, dst, d, r);
                    } else {
                        Q8Interleaved.packQuants(src, s + 2, dst, d, r);
                    }
                }
            }
            MemorySegment.copy(dst, 0, seg, ValueLayout.JAVA_BYTE, base, dst.length);
        }
    }

    /**
     * Whether every half-precision scale of the row-major {@code type} matrix {@code [rows][cols]}
     * in {@code seg} is finite (no infinity or NaN), which the repacked kernels' scale conversion
     * ({@link #SCALES}) needs.
     */
    public static boolean finiteScales(TensorType type, MemorySegment seg, int rows, int cols) {
        long blocks = (long) rows * (cols / 32);
        int stride = type.blockBytes();
        for (long k = 0; k < blocks; k++) {
            if ((seg.get(I16, stride * k) & 0x7C00) == 0x7C00) {
                return false;
            }
        }
        return true;
    }

    /**
     * Decodes row {@code r} of the repacked {@code type} matrix {@code w} ({@code cols} wide) into
     * {@code dst[dstOff..dstOff+cols-1]}: the exact values of {@link ScalarDequant} (embedding
     * lookups).
     */
    public static void decodeRow(TensorType type, MemorySegment w, int cols, int r, float[] dst, int dstOff) {
        int nb = cols / 32;
        int lane = r % GROUP;
        long base = (long) (r / GROUP) * nb * blockBytes(type);
        for (int b = 0; b < nb; b++) {
            long p = base + b * blockBytes(type);
            float d = Float.float16ToFloat(w.get(I16, p + 2L * lane));
            if (type == TensorType.Q4_0) {
                Q4Interleaved.decodeQuants(w, p, lane, d, dst, dstOff + 32 * b);
            } else {
                Q8Interleaved.decodeQuants(w, p, lane, d, dst, dstOff + 32 * b);
            }
        }
    }

    /**
     * For output rows {@code rowFrom..rowTo-1} of the repacked {@code type} matrix {@code w}
     * ({@code [rows][cols]}): {@code y[i*rows + r] = sum_b d_w(r,b) d_x(i,b) sum_j q_w(r,b,j) q_x(i,b,j)}
     * (Q4_0: {@code q_w - 8}), {@code i < n}, {@code x} quantized from {@code [n][cols]}. Whole
     * groups are computed in vectors, {@link #CHUNK_GROUPS} at a time for every activation row; a
     * group cut by the range is computed whole into scratch and only its rows in the range are
     * stored, so every row gets the same bits whatever the range.
     */
    public static void matmul(TensorType type, MemorySegment w, int rows, int cols, Q8Activations x, int n, float[] y,
                              int rowFrom, int rowTo) {
        int nb = cols / 32;
        int gFirst = (rowFrom + GROUP - 1) / GROUP;   // the whole groups: gFirst .. gEnd-1
        int gEnd = rowTo / GROUP;
        for (int g = gFirst; g < gEnd; g += CHUNK_GROUPS) {
            int to = Math.min(gEnd, g + CHUNK_GROUPS);
            int i = 0;
            for (; PAIRED_ROWS && i + 1 < n; i += 2) {
                groupsPaired(type, w, nb, g, to, x, i, y, rows);
            }
            for (; i < n; i++) {
                groups(type, w, nb, g, to, x, i, y, i * rows);
            }
        }
        int cutLow = rowFrom / GROUP;
        int cutHigh = (rowTo - 1) / GROUP;
        if (cutLow * GROUP < rowFrom || gEnd <= gFirst) {   // a group cut at the start (or the range inside one group)
            cut(type, w, nb, cutLow, x, n, y, rows, rowFrom, rowTo);
        }
        if (cutHigh != cutLow && (cutHigh + 1) * GROUP > rowTo) {
            cut(type, w, nb, cutHigh, x, n, y, rows, rowFrom, rowTo);
        }
    }

    /** Group {@code g}, which the range cuts: computed whole into scratch, its rows in the range copied to {@code y}. */
    private static void cut(TensorType type, MemorySegment w, int nb, int g, Q8Activations x, int n, float[] y, int rows,
                            int rowFrom, int rowTo) {
        float[] part = new float[GROUP];
        int r0 = g * GROUP;
        int lo = Math.max(rowFrom, r0);
        int hi = Math.min(rowTo, r0 + GROUP);
        for (int i = 0; i < n; i++) {
            groups(type, w, nb, g, g + 1, x, i, part, -r0);
            System.arraycopy(part, lo - r0, y, i * rows + lo, hi - lo);
        }
    }

    /** Groups {@code gFrom..gTo-1} against activation row {@code i}: group g's outputs at {@code out[outOff + g*GROUP ..]}. */
    private static void groups(TensorType type, MemorySegment w, int nb, int gFrom, int gTo, Q8Activations x, int i,
                               float[] out, int outOff) {
        if (type == TensorType.Q4_0) {
            Q4Interleaved.groups(w, nb, gFrom, gTo, x.pairs[i], x.scales[i], x.offsets[i], out, outOff);
        } else {
            Q8Interleaved.groups(w, nb, gFrom, gTo, x.adjacent[i], x.scales[i], out, outOff);
        }
    }

    /** {@link #groups} for activation rows {@code i} and {@code i + 1} at once, into rows {@code i} and {@code i + 1} of {@code y[n][rows]}. */
    private static void groupsPaired(TensorType type, MemorySegment w, int nb, int gFrom, int gTo, Q8Activations x, int i,
                                     float[] y, int rows) {
        if (type == TensorType.Q4_0) {
            Q4Interleaved.groups2(w, nb, gFrom, gTo, x.pairs[i], x.scales[i], x.offsets[i], y, i * rows,
                    x.pairs[i + 1], x.scales[i + 1], x.offsets[i + 1], y, (i + 1) * rows);
        } else {
            Q8Interleaved.groups2(w, nb, gFrom, gTo, x.adjacent[i], x.scales[i], y, i * rows,
                    x.adjacent[i + 1], x.scales[i + 1], y, (i + 1) * rows);
        }
    }
}

package io.kvtier.model.tensor;

import static io.kvtier.model.tensor.QuantSpecies.F;
import static io.kvtier.model.tensor.QuantSpecies.L;

import jdk.incubator.vector.FloatVector;

/**
 * {@code Y = X W^T} for an encoded weight, split by output rows. For a few activation rows
 * (decode) each weight row is decoded in registers once per activation row ({@link QuantDot}):
 * the weights stream through once, nothing is written. For more (prefill) the weights are taken
 * {@value #TILE_ROWS} rows at a time: the tile is decoded once into float32 scratch
 * ({@link VectorDequant}) and multiplied with every activation row, 4 activation rows at a time,
 * so each decoded vector loaded feeds 4 FMAs and each activation vector 4. Never more than
 * {@value #TILE_ROWS} rows are decoded into memory.
 */
public final class QuantMatmul {

    /** The calling thread's scratch of the quantized products made ({@code Kernels.prepareThread}). */
    public static void prepareThread() {
        InterleavedTiles.prepareThread();
    }

    /** Activation rows from which decoding a tile once into scratch beats decoding it per row (measured order of magnitude). */
    public static final int SCRATCH_FROM = 4;
    /** Weight rows decoded together; also the activation rows of the micro-tile. */
    static final int TILE_ROWS = 4;
    /**
     * Row width (values) below which decode takes Q4_0 and int8 Q8_0 weights four rows per pass
     * ({@link QuantDot#q4_0Rows4}, {@link Int8Dot#q8_0Rows4}; each the single-row kernel's
     * operations in its order): on short rows the per-row work
     * outside the block loop (the accumulators' reduction, the loop's entry and exit) weighs most
     * and four rows share it; on long rows the single-row kernels were as fast or faster
     * (docs/design-notes.md). Property {@code kvtier.quant.rows4BelowCols}; 0 turns it off.
     */
    public static final int ROWS4_BELOW_COLS = Integer.getInteger("kvtier.quant.rows4BelowCols", 512);

    private QuantMatmul() {
    }

    /**
     * For output rows {@code rowFrom..rowTo-1}: {@code y[i*rows + r] = sum_k W[r][k] * x[i*cols + k]},
     * {@code i < n}; W is {@code w} ({@code [rows][cols]}), X {@code [n][cols]}, Y {@code [n][rows]}.
     */
    public static void matmul(Weight w, float[] x, int n, float[] y, int rowFrom, int rowTo) {
        int cols = w.cols();
        int rows = w.rows();
        if (w.interleaved()) {
            InterleavedTiles.matmul(w.type(), w.data(), rows, cols, x, n, y, rowFrom, rowTo);
            return;
        }
        if (n < SCRATCH_FROM) {
            rowByRow(w, x, n, y, rowFrom, rowTo);
            return;
        }
        float[] tile = new float[TILE_ROWS * cols];
        for (int r0 = rowFrom; r0 < rowTo; r0 += TILE_ROWS) {
            int tr = Math.min(TILE_ROWS, rowTo - r0);
            for (int k = 0; k < tr; k++) {
                row(w, r0 + k, tile, k * cols);
            }
            int i = 0;
            if (tr == TILE_ROWS && cols % L == 0) {
                for (; i + TILE_ROWS <= n; i += TILE_ROWS) {
                    tile4x4(tile, x, i * cols, cols, y, i * rows + r0, rows);
                }
            }
            for (; i < n; i++) {
                for (int k = 0; k < tr; k++) {
                    y[i * rows + r0 + k] = dot(tile, k * cols, x, i * cols, cols);
                }
            }
        }
    }

    /**
     * As {@link #matmul(Weight, float[], int, float[], int, int)} for a weight that is not
     * interleaved, whatever {@code n}: each weight row streamed once per activation row through
     * {@link QuantDot} (the decode kernels), so every output is computed the same way however
     * many rows the step has (the batch-invariant mode; {@code matmul} below {@link #SCRATCH_FROM} rows).
     */
    public static void rowByRow(Weight w, float[] x, int n, float[] y, int rowFrom, int rowTo) {
        int cols = w.cols();
        int rows = w.rows();
        int r = rowFrom;
        if (w.type() == TensorType.Q4_0 && cols < ROWS4_BELOW_COLS) {
            for (; r + 4 <= rowTo; r += 4) {
                for (int i = 0; i < n; i++) {
                    QuantDot.q4_0Rows4(w.data(), w.rowOffset(r), w.rowBytes(), x, i * cols, cols, y, i * rows + r);
                }
            }
        }
        for (; r < rowTo; r++) {
            long off = w.rowOffset(r);
            for (int i = 0; i < n; i++) {
                y[i * rows + r] = QuantDot.dot(w.type(), w.data(), off, x, i * cols, cols);
            }
        }
    }

    /**
     * Whether {@code w} has a kernel on Q8_0-quantized activations
     * ({@link #matmul(Weight, Q8Activations, int, float[], int, int)}): a type
     * {@link Int8Dot#supports}, or an interleaved weight ({@link Interleaved}).
     */
    public static boolean int8(Weight w) {
        return w.interleaved() || Int8Dot.supports(w.type());
    }

    /**
     * As {@link #matmul(Weight, float[], int, float[], int, int)} for rows of activations quantized to Q8_0 ({@code x}, quantized from the
     * {@code [n][cols]} input), for a weight {@link #int8} accepts: each weight row is streamed
     * once per activation row through {@link Int8Dot}, or each group of interleaved rows through
     * {@link Interleaved}. Any number of rows (every step with Q8_0 activations, the default),
     * each computed the same way whatever the others.
     */
    public static void matmul(Weight w, Q8Activations x, int n, float[] y, int rowFrom, int rowTo) {
        int cols = w.cols();
        int rows = w.rows();
        if (w.interleaved()) {
            Interleaved.matmul(w.type(), w.data(), rows, cols, x, n, y, rowFrom, rowTo);
            return;
        }
        int r = rowFrom;
        if (w.type() == TensorType.Q8_0 && cols < ROWS4_BELOW_COLS) {
            for (; r + 4 <= rowTo; r += 4) {
                for (int i = 0; i < n; i++) {
                    Int8Dot.q8_0Rows4(w.data(), w.rowOffset(r), w.rowBytes(), x.q, x.d, i * cols, cols, y, i * rows + r);
                }
            }
        }
        for (; r < rowTo; r++) {
            long off = w.rowOffset(r);
            for (int i = 0; i < n; i++) {
                y[i * rows + r] = Int8Dot.dot(w.type(), w.data(), off, x, i, cols);
            }
        }
    }

    /**
     * {@code y[yOff + a*rows + b] = tile[b] . x[a]} for tile rows b &lt; 4 and activation rows
     * a &lt; 4 (starting at {@code xOff}), {@code cols} a multiple of the lane count: 16
     * accumulators, 8 loads per 16 FMAs.
     */
    private static void tile4x4(float[] t, float[] x, int xOff, int cols, float[] y, int yOff, int rows) {
        FloatVector c00 = FloatVector.zero(F), c01 = c00, c02 = c00, c03 = c00;
        FloatVector c10 = c00, c11 = c00, c12 = c00, c13 = c00;
        FloatVector c20 = c00, c21 = c00, c22 = c00, c23 = c00;
        FloatVector c30 = c00, c31 = c00, c32 = c00, c33 = c00;
        for (int k = 0; k < cols; k += L) {
            FloatVector w0 = FloatVector.fromArray(F, t, k);
            FloatVector w1 = FloatVector.fromArray(F, t, cols + k);
            FloatVector w2 = FloatVector.fromArray(F, t, 2 * cols + k);
            FloatVector w3 = FloatVector.fromArray(F, t, 3 * cols + k);
            FloatVector x0 = FloatVector.fromArray(F, x, xOff + k);
            c00 = w0.fma(x0, c00);
            c01 = w1.fma(x0, c01);
            c02 = w2.fma(x0, c02);
            c03 = w3.fma(x0, c03);
            FloatVector x1 = FloatVector.fromArray(F, x, xOff + cols + k);
            c10 = w0.fma(x1, c10);
            c11 = w1.fma(x1, c11);
            c12 = w2.fma(x1, c12);
            c13 = w3.fma(x1, c13);
            FloatVector x2 = FloatVector.fromArray(F, x, xOff + 2 * cols + k);
            c20 = w0.fma(x2, c20);
            c21 = w1.fma(x2, c21);
            c22 = w2.fma(x2, c22);
            c23 = w3.fma(x2, c23);
            FloatVector x3 = FloatVector.fromArray(F, x, xOff + 3 * cols + k);
            c30 = w0.fma(x3, c30);
            c31 = w1.fma(x3, c31);
            c32 = w2.fma(x3, c32);
            c33 = w3.fma(x3, c33);
        }
        y[yOff] = Lanes.sum(c00);
        y[yOff + 1] = Lanes.sum(c01);
        y[yOff + 2] = Lanes.sum(c02);
        y[yOff + 3] = Lanes.sum(c03);
        y[yOff + rows] = Lanes.sum(c10);
        y[yOff + rows + 1] = Lanes.sum(c11);
        y[yOff + rows + 2] = Lanes.sum(c12);
        y[yOff + rows + 3] = Lanes.sum(c13);
        y[yOff + 2 * rows] = Lanes.sum(c20);
        y[yOff + 2 * rows + 1] = Lanes.sum(c21);
        y[yOff + 2 * rows + 2] = Lanes.sum(c22);
        y[yOff + 2 * rows + 3] = Lanes.sum(c23);
        y[yOff + 3 * rows] = Lanes.sum(c30);
        y[yOff + 3 * rows + 1] = Lanes.sum(c31);
        y[yOff + 3 * rows + 2] = Lanes.sum(c32);
        y[yOff + 3 * rows + 3] = Lanes.sum(c33);
    }

    /** {@code sum_k a[aOff+k] * x[xOff+k]}, {@code k < n}: the edges of the tiling. */
    private static float dot(float[] a, int aOff, float[] x, int xOff, int n) {
        FloatVector s = FloatVector.zero(F);
        int k = 0;
        for (; k + L <= n; k += L) {
            s = FloatVector.fromArray(F, a, aOff + k).fma(FloatVector.fromArray(F, x, xOff + k), s);
        }
        float r = Lanes.sum(s);
        for (; k < n; k++) {
            r += a[aOff + k] * x[xOff + k];
        }
        return r;
    }

    /** Decodes row {@code r} of {@code w} into {@code dst[dstOff..dstOff+cols-1]} (embedding lookup). */
    public static void row(Weight w, int r, float[] dst, int dstOff) {
        if (w.interleaved()) {
            Interleaved.decodeRow(w.type(), w.data(), w.cols(), r, dst, dstOff);
            return;
        }
        VectorDequant.row(w.type(), w.data(), w.rowOffset(r), dst, dstOff, w.cols());
    }
}

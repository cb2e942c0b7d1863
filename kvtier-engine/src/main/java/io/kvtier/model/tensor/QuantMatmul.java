package io.kvtier.model.tensor;

/**
 * {@code Y = X W^T} for an encoded weight, split by output rows. For a few activation rows each
 * weight row is decoded in registers once per activation row ({@link QuantDot}); for a larger
 * batch (prefill) each weight row is decoded once into a one-row scratch buffer and dotted with
 * every activation row, so the cost of decoding is shared. Never more than one row is decoded
 * into memory.
 */
public final class QuantMatmul {

    /** Activation rows from which decoding a row once into scratch beats decoding it per row (measured order of magnitude). */
    static final int SCRATCH_FROM = 4;

    private QuantMatmul() {
    }

    /**
     * For output rows {@code rowFrom..rowTo-1}: {@code y[i*rows + r] = sum_k W[r][k] * x[i*cols + k]},
     * {@code i < n}; W is {@code w} ({@code [rows][cols]}), X {@code [n][cols]}, Y {@code [n][rows]}.
     */
    public static void matmul(Weight w, float[] x, int n, float[] y, int rowFrom, int rowTo) {
        int cols = w.cols();
        int rows = w.rows();
        if (n < SCRATCH_FROM) {
            for (int r = rowFrom; r < rowTo; r++) {
                long off = w.rowOffset(r);
                for (int i = 0; i < n; i++) {
                    y[i * rows + r] = QuantDot.dot(w.type(), w.data(), off, x, i * cols, cols);
                }
            }
            return;
        }
        float[] row = new float[cols];
        for (int r = rowFrom; r < rowTo; r++) {
            ScalarDequant.dequantize(w.type(), w.data(), w.rowOffset(r), row, 0, cols);
            for (int i = 0; i < n; i++) {
                y[i * rows + r] = FloatDot.dot(row, x, i * cols, cols);
            }
        }
    }

    /** Dequantizes row {@code r} of {@code w} into {@code dst[dstOff..dstOff+cols-1]} (embedding lookup). */
    public static void row(Weight w, int r, float[] dst, int dstOff) {
        ScalarDequant.dequantize(w.type(), w.data(), w.rowOffset(r), dst, dstOff, w.cols());
    }
}

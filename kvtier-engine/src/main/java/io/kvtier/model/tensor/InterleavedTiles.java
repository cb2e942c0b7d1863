package io.kvtier.model.tensor;

import static io.kvtier.model.tensor.Interleaved.GROUP;
import static io.kvtier.model.tensor.QuantSpecies.F;
import static io.kvtier.model.tensor.QuantSpecies.L;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;

/**
 * The float32-activation product on Q4_0 and Q8_0 weights repacked by {@link Interleaved} (prefill
 * chunks, batches of sequences): each group of
 * {@link Interleaved#GROUP} rows is decoded once per call into a tile {@code [cols][GROUP]}
 * ({@link Q4Interleaved#decodeGroup}, {@link Q8Interleaved#decodeGroup})
 * (lanes = rows, so a tile vector is one column of 16 rows and an accumulator is 16 finished
 * outputs: no lane reductions, and each activation row's 16 outputs are one contiguous store),
 * then {@value #ACT_ROWS} activation rows at a time meet two groups' tiles: per column 2 tile
 * loads and 8 broadcast activations feed 16 FMAs into 16 accumulators (the ratio of
 * {@code PackedMatmul}'s 8 x 2 tile, which the file layout used). With 256-bit vectors (16
 * registers) one group at a time (8 accumulators), so nothing spills.
 *
 * <p>Every output is the sequential sum {@code fma(w[c], x[c], acc)} over {@code c = 0..cols-1}
 * of {@link ScalarDequant}'s values, whichever kernel computes it: a row's bits do not depend
 * on the range of rows or the batch. A last pass of fewer than {@value #ACT_ROWS} activation
 * rows repeats the last row in the unused accumulators and does not store them. The activations
 * are packed once per call, 8 rows column by column ({@link #pack}). A group cut by
 * the range is computed whole into scratch and only its rows in the range are copied.
 * The tile and that scratch are per thread, kept across calls.
 */
final class InterleavedTiles {

    /** Activation rows per pass of the kernels. */
    static final int ACT_ROWS = 8;
    /** Two groups per pass only with 32 vector registers (AVX-512): 16 accumulators + 2 tile vectors + a broadcast. */
    private static final boolean PAIRS = L == 16;

    private InterleavedTiles() {
    }

    /** Per-thread scratch: the decoded tiles of two groups, the outputs of cut groups. */
    private static final class Scratch {
        float[] tile = new float[0];
        float[] part = new float[0];
        float[] xt = new float[0];

        float[] tile(int floats) {
            if (tile.length < floats) {
                tile = new float[floats];
            }
            return tile;
        }

        float[] xt(int floats) {
            if (xt.length < floats) {
                xt = new float[floats];
            }
            return xt;
        }

        float[] part(int floats) {
            if (part.length < floats) {
                part = new float[floats];
            }
            return part;
        }
    }

    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    /** The calling thread's scratch made ({@link QuantMatmul#prepareThread}). */
    static void prepareThread() {
        SCRATCH.get();
    }

    /**
     * For output rows {@code rowFrom..rowTo-1} of the repacked {@code type} matrix {@code [rows][cols]}
     * {@code w}: {@code y[i*rows + r] = sum_c W[r][c] x[i*cols + c]}, {@code i < n}, with
     * {@code x} float32 {@code [n][cols]}, {@code y} {@code [n][rows]}.
     */
    static void matmul(TensorType type, MemorySegment w, int rows, int cols, float[] x, int n, float[] y, int rowFrom, int rowTo) {
        int nb = cols / 32;
        int span = cols * GROUP;
        long groupBytes = nb * Interleaved.blockBytes(type);
        Scratch scratch = SCRATCH.get();
        float[] tile = scratch.tile(2 * span);
        float[] xt = scratch.xt((n + ACT_ROWS - 1) / ACT_ROWS * ACT_ROWS * cols);
        pack(x, n, cols, xt);
        int gEnd = (rowTo + GROUP - 1) / GROUP;
        for (int g = rowFrom / GROUP; g < gEnd; g += PAIRS ? 2 : 1) {
            boolean pair = PAIRS && g + 1 < gEnd;
            int r0 = g * GROUP;
            boolean wholeA = r0 >= rowFrom && r0 + GROUP <= rowTo;
            boolean wholeB = pair && r0 + 2 * GROUP <= rowTo;   // r0 + GROUP > rowFrom already
            float[] part = wholeA && (wholeB || !pair) ? null : scratch.part(2 * n * GROUP);
            decodeGroup(type, w, g * groupBytes, nb, tile, 0);
            if (pair) {
                decodeGroup(type, w, (g + 1) * groupBytes, nb, tile, span);
            }
            // a cut group's outputs go to part ([n][GROUP], group B's after group A's), then its rows in the range are copied
            float[] outA = wholeA ? y : part;
            int strideA = wholeA ? rows : GROUP;
            int offA = wholeA ? r0 : 0;
            float[] outB = wholeB ? y : part;
            int strideB = wholeB ? rows : GROUP;
            int offB = wholeB ? r0 + GROUP : n * GROUP;
            for (int i = 0; i < n; i += ACT_ROWS) {
                if (pair) {
                    pass2x8(tile, span, cols, xt, i, n, outA, strideA, offA, outB, strideB, offB);
                } else {
                    pass1x8(tile, cols, xt, i, n, outA, strideA, offA);
                }
            }
            if (!wholeA) {
                copyRange(part, 0, n, r0, rowFrom, rowTo, y, rows);
            }
            if (pair && !wholeB) {
                copyRange(part, n * GROUP, n, r0 + GROUP, rowFrom, rowTo, y, rows);
            }
        }
    }

    /** Copies the rows of group {@code [r0, r0+GROUP)} inside {@code [rowFrom, rowTo)} from {@code part[at..]} ({@code [n][GROUP]}) to {@code y}. */
    private static void copyRange(float[] part, int at, int n, int r0, int rowFrom, int rowTo, float[] y, int rows) {
        int lo = Math.max(rowFrom, r0);
        int hi = Math.min(rowTo, r0 + GROUP);
        for (int k = 0; k < n; k++) {
            System.arraycopy(part, at + k * GROUP + lo - r0, y, k * rows + lo, hi - lo);
        }
    }

    /** Decodes the group at byte {@code base} ({@code nb} blocks) into {@code tile[tileOff + c * GROUP + r]} = value {@code c} of the group's row {@code r}. */
    private static void decodeGroup(TensorType type, MemorySegment w, long base, int nb, float[] tile, int tileOff) {
        if (type == TensorType.Q4_0) {
            Q4Interleaved.decodeGroup(w, base, nb, tile, tileOff);
        } else {
            Q8Interleaved.decodeGroup(w, base, nb, tile, tileOff);
        }
    }

    /**
     * Packs the activations {@code x} ({@code [n][cols]}) for the passes: each 8 rows from
     * {@code i = 0, 8, ..} as {@code xt[i * cols + c * ACT_ROWS + k] = x[(i + k) * cols + c]}, the
     * last row standing in for rows past {@code n}. A pass then reads one column's 8 values at one
     * index: with 8 row offsets C2 spent an address addition on every broadcast (31 instructions
     * per column for 8 FMAs, against 20 packed).
     */
    private static void pack(float[] x, int n, int cols, float[] xt) {
        for (int i = 0; i < n; i += ACT_ROWS) {
            for (int k = 0; k < ACT_ROWS; k++) {
                int from = Math.min(i + k, n - 1) * cols;
                for (int c = 0, at = i * cols + k; c < cols; c++, at += ACT_ROWS) {
                    xt[at] = x[from + c];
                }
            }
        }
    }

    /**
     * Activation rows {@code i..i+7} (packed in {@code xt}; those below {@code n} stored) against the two tiles at
     * {@code t[0..]} and {@code t[span..]}: outputs of row {@code i+k} at
     * {@code outA[(i+k)*strideA + offA]} and {@code outB[(i+k)*strideB + offB]}, 16 lanes each.
     */
    private static void pass2x8(float[] t, int span, int cols, float[] xt, int i, int n,
                                float[] outA, int strideA, int offA, float[] outB, int strideB, int offB) {
        FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
        FloatVector b0 = a0, b1 = a0, b2 = a0, b3 = a0, b4 = a0, b5 = a0, b6 = a0, b7 = a0;
        for (int c = 0, tc = 0, xc = i * cols; c < cols; c++, tc += GROUP, xc += ACT_ROWS) {
            FloatVector ta = FloatVector.fromArray(F, t, tc);
            FloatVector tb = FloatVector.fromArray(F, t, span + tc);
            FloatVector v = FloatVector.broadcast(F, xt[xc]);
            a0 = ta.fma(v, a0);
            b0 = tb.fma(v, b0);
            v = FloatVector.broadcast(F, xt[xc + 1]);
            a1 = ta.fma(v, a1);
            b1 = tb.fma(v, b1);
            v = FloatVector.broadcast(F, xt[xc + 2]);
            a2 = ta.fma(v, a2);
            b2 = tb.fma(v, b2);
            v = FloatVector.broadcast(F, xt[xc + 3]);
            a3 = ta.fma(v, a3);
            b3 = tb.fma(v, b3);
            v = FloatVector.broadcast(F, xt[xc + 4]);
            a4 = ta.fma(v, a4);
            b4 = tb.fma(v, b4);
            v = FloatVector.broadcast(F, xt[xc + 5]);
            a5 = ta.fma(v, a5);
            b5 = tb.fma(v, b5);
            v = FloatVector.broadcast(F, xt[xc + 6]);
            a6 = ta.fma(v, a6);
            b6 = tb.fma(v, b6);
            v = FloatVector.broadcast(F, xt[xc + 7]);
            a7 = ta.fma(v, a7);
            b7 = tb.fma(v, b7);
        }
        // no vector arrays or helpers here: a vector that leaves compiled code is boxed
        int count = Math.min(ACT_ROWS, n - i);
        int ya = i * strideA + offA, yb = i * strideB + offB;
        a0.intoArray(outA, ya);
        b0.intoArray(outB, yb);
        if (count > 1) {
            a1.intoArray(outA, ya + 1 * strideA);
            b1.intoArray(outB, yb + 1 * strideB);
        }
        if (count > 2) {
            a2.intoArray(outA, ya + 2 * strideA);
            b2.intoArray(outB, yb + 2 * strideB);
        }
        if (count > 3) {
            a3.intoArray(outA, ya + 3 * strideA);
            b3.intoArray(outB, yb + 3 * strideB);
        }
        if (count > 4) {
            a4.intoArray(outA, ya + 4 * strideA);
            b4.intoArray(outB, yb + 4 * strideB);
        }
        if (count > 5) {
            a5.intoArray(outA, ya + 5 * strideA);
            b5.intoArray(outB, yb + 5 * strideB);
        }
        if (count > 6) {
            a6.intoArray(outA, ya + 6 * strideA);
            b6.intoArray(outB, yb + 6 * strideB);
        }
        if (count > 7) {
            a7.intoArray(outA, ya + 7 * strideA);
            b7.intoArray(outB, yb + 7 * strideB);
        }
    }

    /** As {@link #pass2x8} for one tile ({@code t[0..]}): 8 accumulators. */
    private static void pass1x8(float[] t, int cols, float[] xt, int i, int n, float[] out, int stride, int off) {
        FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
        for (int c = 0, tc = 0, xc = i * cols; c < cols; c++, tc += GROUP, xc += ACT_ROWS) {
            FloatVector ta = FloatVector.fromArray(F, t, tc);
            a0 = ta.fma(FloatVector.broadcast(F, xt[xc]), a0);
            a1 = ta.fma(FloatVector.broadcast(F, xt[xc + 1]), a1);
            a2 = ta.fma(FloatVector.broadcast(F, xt[xc + 2]), a2);
            a3 = ta.fma(FloatVector.broadcast(F, xt[xc + 3]), a3);
            a4 = ta.fma(FloatVector.broadcast(F, xt[xc + 4]), a4);
            a5 = ta.fma(FloatVector.broadcast(F, xt[xc + 5]), a5);
            a6 = ta.fma(FloatVector.broadcast(F, xt[xc + 6]), a6);
            a7 = ta.fma(FloatVector.broadcast(F, xt[xc + 7]), a7);
        }
        int count = Math.min(ACT_ROWS, n - i);
        int y0 = i * stride + off;
        a0.intoArray(out, y0);
        if (count > 1) {
            a1.intoArray(out, y0 + 1 * stride);
        }
        if (count > 2) {
            a2.intoArray(out, y0 + 2 * stride);
        }
        if (count > 3) {
            a3.intoArray(out, y0 + 3 * stride);
        }
        if (count > 4) {
            a4.intoArray(out, y0 + 4 * stride);
        }
        if (count > 5) {
            a5.intoArray(out, y0 + 5 * stride);
        }
        if (count > 6) {
            a6.intoArray(out, y0 + 6 * stride);
        }
        if (count > 7) {
            a7.intoArray(out, y0 + 7 * stride);
        }
    }
}

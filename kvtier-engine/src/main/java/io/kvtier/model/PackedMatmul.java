package io.kvtier.model;

import io.kvtier.model.tensor.QuantMatmul;
import io.kvtier.model.tensor.Weight;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * The batched product {@code Y = X W^T} of {@link VectorKernels} (F32 weights) and of the
 * forward pass for encoded weights ({@link Weight}: Q8_0, Q4_0, ...) for batches of at least one
 * vector of rows (32-sequence decode, prefill chunks), vectorised across the batch instead of
 * along a weight row.
 *
 * <p>The activations are first packed ({@link #pack}) into blocks of {@code B = 2L} batch rows
 * ({@code L} = floats per vector), each block k-major: {@code packed[i0 * in + k * B + j] = X[i0 + j][k]}
 * (a last block of at most {@code L} rows is {@code L} wide; rows past {@code n} are zero). Then for
 * 8 (or 4) weight rows x one block, each step of the k loop broadcasts one weight of each row and
 * multiplies it into the block's 2 vectors of {@code X[.][k]}: 16 accumulators that hold 8 x 2L
 * finished outputs at the end of the k loop. No horizontal reduction at all (the row-wise tiles
 * reduce each output across lanes at the end of its row, as many reductions as outputs: at
 * {@code in = 288} about half as much work again as the FMAs). The weight rows are the outer
 * loop: each group of 8 is read from memory (and, for an encoded weight, decoded) once per call
 * and multiplied into every block, which stay in cache ({@code n * in} floats: 96 KiB for 32
 * rows of 768). Below 512 bits (16 vector registers) whole pairs of blocks take tiles of 2 weight
 * rows x 2 blocks instead ({@link #tile2x4}: 8 accumulators, each broadcast weight feeding 4 FMAs).
 *
 * <p>A tile's weight rows are copied from the segment to a heap array first (one bulk copy of
 * 8 rows): the k loop then reads them with array loads whose bounds checks C2 hoists, where a
 * segment read per broadcast weight kept a check per load (43-46 against 45-52 multiply-adds per ns
 * of CPU time in one run of {@code PackedMatmulComparison}; small, but never slower).
 *
 * <p>Every output is a plain sequential sum {@code fma(w[k], x[k], acc)} over {@code k = 0..in-1},
 * whichever code path (4-row tile, remainder row, block width) computes it, so results do not
 * depend on how the rows are split across threads.
 */
final class PackedMatmul {

    private static final VectorSpecies<Float> S = VectorKernels.S;
    private static final int L = S.length();
    /** Batch rows per block: two vectors. */
    static final int B = 2 * L;
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private PackedMatmul() {
    }

    /** Whether a batch of {@code n} rows is worth packing: at least one whole vector of rows. */
    static boolean packs(int n) {
        return n >= L;
    }

    /** Floats of the packed form of {@code n} rows of {@code in} floats: {@code n} rounded up to {@code L}, times {@code in}. */
    static int packedLength(int n, int in) {
        return (n + L - 1) / L * L * in;
    }

    /** Packs {@code x[n][in]} into {@code packed} (at least {@link #packedLength} floats) as the class comment lays out. */
    static void pack(float[] x, int n, int in, float[] packed) {
        for (int i0 = 0; i0 < n; i0 += B) {
            int width = width(n, i0);
            int rows = Math.min(width, n - i0);
            int base = i0 * in;
            for (int j = 0; j < rows; j++) {
                int src = (i0 + j) * in;
                for (int k = 0, d = base + j; k < in; k++, d += width) {
                    packed[d] = x[src + k];
                }
            }
            for (int j = rows; j < width; j++) {
                for (int k = 0, d = base + j; k < in; k++, d += width) {
                    packed[d] = 0f;
                }
            }
        }
    }

    /** Width of the block at batch row {@code i0}: B, or L for a last block of at most L rows. */
    private static int width(int n, int i0) {
        return n - i0 <= L ? L : B;
    }

    /**
     * Output columns {@code rowFrom..rowTo-1} of {@code Y[n][out] = X W^T}, X packed by {@link #pack};
     * W {@code [out][in]} float32 little-endian in {@code w}.
     */
    static void matmul(MemorySegment w, int in, int out, float[] packed, int n, float[] y, int rowFrom, int rowTo) {
        long rowBytes = (long) in * Float.BYTES;
        matmul((r, count, dst) -> MemorySegment.copy(w, F32, r * rowBytes, dst, 0, count * in), w, in, out, packed, n, y,
                rowFrom, rowTo);
    }

    /**
     * As {@link #matmul(MemorySegment, int, int, float[], int, float[], int, int)} for a weight in
     * any encoding ({@code [w.rows()][w.cols()]}): each tile's rows are decoded into the heap
     * rows ({@link QuantMatmul#row}) instead of copied, once per call, so every weight block is
     * decoded once for the whole batch and never more than 8 rows are decoded at a time.
     */
    static void matmul(Weight w, float[] packed, int n, float[] y, int rowFrom, int rowTo) {
        int in = w.cols();
        matmul((r, count, dst) -> {
            for (int q = 0; q < count; q++) {
                QuantMatmul.row(w, r + q, dst, q * in);
            }
        }, null, in, w.rows(), packed, n, y, rowFrom, rowTo);
    }

    /** Puts weight rows {@code r..r+count-1} ({@code count <= 8}) as floats in {@code dst[0..count*in-1]}. */
    @FunctionalInterface
    private interface RowSource {
        void load(int r, int count, float[] dst);
    }

    /**
     * The product over weight rows taken 8 (then 4, then 1) at a time from {@code rows}: each
     * group is loaded once and multiplied into every packed block (the packed input, {@code n * in}
     * floats, stays in cache across the groups). With {@code f32} (the weights' own float32
     * segment, null for an encoded weight) the 8-row tiles of whole blocks broadcast the weights
     * straight from it, and the group is copied to the heap only for the other tiles.
     */
    private static void matmul(RowSource rows, MemorySegment f32, int in, int out, float[] packed, int n, float[] y,
                               int rowFrom, int rowTo) {
        int paired = f32 != null && PAIRED_BLOCKS ? n / (2 * B) * (2 * B) : 0;
        if (paired > 0) {
            pairs(f32, in, out, packed, paired, y, rowFrom, rowTo);
        }
        if (paired < n) {
            matmul(rows, f32, in, out, packed, n, paired, y, rowFrom, rowTo);
        }
    }

    /**
     * Whether batch rows go through {@link #tile2x4} two blocks at a time: below 512 bits, where
     * the CPU has 16 vector registers (AVX2) and {@link #tile8x2}'s 16 accumulators, 2 activation
     * vectors and a broadcast do not fit (one thread of a Zen 3, 32 rows, CPU time: 20-25
     * multiply-adds per ns for 8 x 2 against 33-40 for 2 x 4 on the 15M shape's products, speed12).
     * At 512 bits (32 registers) the 8 x 2 tile stays.
     */
    private static final boolean PAIRED_BLOCKS = S.vectorBitSize() < 512;

    /**
     * Batch rows {@code 0..paired-1} (whole pairs of full blocks) of output columns
     * {@code rowFrom..rowTo-1}: 2 weight rows x 2 blocks a tile ({@link #tile2x4}), the two rows
     * {@code h = (rowTo - rowFrom) / 2} apart so that the weights are read as two linear streams
     * (rows {@code r} and {@code r + h}; as {@link VectorKernels}' matrix-vector product reads
     * them: the 15M classifier at 32 rows 34 against 29 multiply-adds per ns for adjacent rows).
     * An odd last row runs as both rows of a tile.
     */
    private static void pairs(MemorySegment w, int in, int out, float[] packed, int paired, float[] y, int rowFrom,
                              int rowTo) {
        float[] tile = SCRATCH.get().tile;
        long rowBytes = (long) in * Float.BYTES;
        int h = (rowTo - rowFrom) / 2;
        for (int r = rowFrom; r < rowFrom + h; r++) {
            for (int i0 = 0; i0 < paired; i0 += 2 * B) {
                tile2x4(w, r * rowBytes, h * rowBytes, in, packed, i0 * in, tile);
                for (int j = 0, yj = i0 * out + r; j < 2 * B; j++, yj += out) {
                    y[yj] = tile[j];
                    y[yj + h] = tile[2 * B + j];
                }
            }
        }
        if (rowFrom + 2 * h < rowTo) {
            int r = rowTo - 1;
            for (int i0 = 0; i0 < paired; i0 += 2 * B) {
                tile2x4(w, r * rowBytes, 0, in, packed, i0 * in, tile);
                for (int j = 0, yj = i0 * out + r; j < 2 * B; j++, yj += out) {
                    y[yj] = tile[j];
                }
            }
        }
    }

    /**
     * tile[q * 2B + 0..2B-1] = weight row q (at byte {@code o + q * apart} of {@code w}) times the
     * two packed blocks at {@code pOff} and {@code pOff + B * in}: 8 accumulators, 4 activation
     * vectors and one broadcast weight, each broadcast feeding 4 FMAs.
     */
    private static void tile2x4(MemorySegment w, long o, long apart, int in, float[] p, int pOff, float[] tile) {
        FloatVector a0 = FloatVector.zero(S), b0 = a0, c0 = a0, d0 = a0, a1 = a0, b1 = a0, c1 = a0, d1 = a0;
        long o1 = o + apart;
        int p2 = B * in;
        for (int k = 0, pk = pOff; k < in; k++, pk += B) {
            long kb = (long) k * Float.BYTES;
            FloatVector x0 = FloatVector.fromArray(S, p, pk), x1 = FloatVector.fromArray(S, p, pk + L);
            FloatVector x2 = FloatVector.fromArray(S, p, pk + p2), x3 = FloatVector.fromArray(S, p, pk + p2 + L);
            FloatVector v = FloatVector.broadcast(S, w.get(F32, o + kb));
            a0 = x0.fma(v, a0);
            b0 = x1.fma(v, b0);
            c0 = x2.fma(v, c0);
            d0 = x3.fma(v, d0);
            v = FloatVector.broadcast(S, w.get(F32, o1 + kb));
            a1 = x0.fma(v, a1);
            b1 = x1.fma(v, b1);
            c1 = x2.fma(v, c1);
            d1 = x3.fma(v, d1);
        }
        a0.intoArray(tile, 0);
        b0.intoArray(tile, L);
        c0.intoArray(tile, 2 * L);
        d0.intoArray(tile, 3 * L);
        a1.intoArray(tile, 2 * B);
        b1.intoArray(tile, 2 * B + L);
        c1.intoArray(tile, 2 * B + 2 * L);
        d1.intoArray(tile, 2 * B + 3 * L);
    }

    /** The product for batch rows {@code i0From..n-1} ({@code i0From} a multiple of {@code B}), as the method above describes. */
    private static void matmul(RowSource rows, MemorySegment f32, int in, int out, float[] packed, int n, int i0From,
                               float[] y, int rowFrom, int rowTo) {
        Scratch scratch = SCRATCH.get();
        float[] tile = scratch.tile;          // one tile's outputs [8 weight rows][B batch rows], scattered into y after its k loop
        float[] wRows = scratch.wRows(8 * in); // the group's weight rows on the heap (see the class comment)
        long rowBytes = (long) in * Float.BYTES;
        int r = rowFrom;
        for (; r + 8 <= rowTo; r += 8) {
            boolean loaded = false;
            for (int i0 = i0From; i0 < n; i0 += B) {
                int width = width(n, i0);
                int pOff = i0 * in;
                if (width == B && f32 != null) {
                    tile8x2(f32, r * rowBytes, rowBytes, in, packed, pOff, tile);
                    scatter(tile, 8, Math.min(B, n - i0), y, i0 * out + r, out);
                    continue;
                }
                if (!loaded) {
                    rows.load(r, 8, wRows);
                    loaded = true;
                }
                if (width == B) {
                    tile8x2(wRows, in, packed, pOff, tile);
                    scatter(tile, 8, Math.min(width, n - i0), y, i0 * out + r, out);
                } else {   // a last block of L rows: the 8 weight rows as two 4-row tiles
                    tile4x1(wRows, 0, in, packed, pOff, tile);
                    scatter(tile, 4, n - i0, y, i0 * out + r, out);
                    tile4x1(wRows, 4 * in, in, packed, pOff, tile);
                    scatter(tile, 4, n - i0, y, i0 * out + r + 4, out);
                }
            }
        }
        for (; r + 4 <= rowTo; r += 4) {
            rows.load(r, 4, wRows);
            for (int i0 = i0From; i0 < n; i0 += B) {
                int width = width(n, i0);
                if (width == B) {
                    tile4x2(wRows, in, packed, i0 * in, tile);
                } else {
                    tile4x1(wRows, 0, in, packed, i0 * in, tile);
                }
                scatter(tile, 4, Math.min(width, n - i0), y, i0 * out + r, out);
            }
        }
        for (; r < rowTo; r++) {
            rows.load(r, 1, wRows);
            for (int i0 = i0From; i0 < n; i0 += B) {
                int width = width(n, i0);
                int pOff = i0 * in;
                for (int j = 0; j < Math.min(width, n - i0); j++) {
                    float acc = 0f;
                    for (int k = 0; k < in; k++) {
                        acc = Math.fma(wRows[k], packed[pOff + k * width + j], acc);
                    }
                    y[(i0 + j) * out + r] = acc;
                }
            }
        }
    }

    /**
     * Per-thread buffers of {@link #matmul}, kept across calls: a fresh pair per call was up to
     * 64 KiB of garbage for each part of each product of each step. Every call writes what it reads.
     */
    private static final class Scratch {
        final float[] tile = new float[8 * B];
        private float[] wRows = new float[0];

        float[] wRows(int floats) {
            if (wRows.length < floats) {
                wRows = new float[floats];
            }
            return wRows;
        }
    }

    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    /** The calling thread's scratch made ({@link Kernels#prepareThread}). */
    static void prepareThread() {
        SCRATCH.get();
    }

    /**
     * y[yAt + j * out + q] = tile[q * B + j] for q < weightRows, j < batchRows: batch row by batch
     * row, so that each writes its {@code weightRows} adjacent outputs together (one cache line of
     * y at a time; weight row by weight row wrote one float into each of {@code batchRows} lines).
     */
    private static void scatter(float[] tile, int weightRows, int batchRows, float[] y, int yAt, int out) {
        for (int j = 0, yj = yAt; j < batchRows; j++, yj += out) {
            for (int q = 0; q < weightRows; q++) {
                y[yj + q] = tile[q * B + j];
            }
        }
    }

    /**
     * tile[q * B + 0..B-1] = weight row q of {@code wr} ([4][in]) times a packed block of B batch
     * rows at {@code pOff} ([in][B]).
     */
    private static void tile4x2(float[] wr, int in, float[] p, int pOff, float[] tile) {
        FloatVector a0 = FloatVector.zero(S), b0 = a0, a1 = a0, b1 = a0, a2 = a0, b2 = a0, a3 = a0, b3 = a0;
        int w1 = in, w2 = 2 * in, w3 = 3 * in;
        for (int k = 0, pk = pOff; k < in; k++, pk += B) {
            FloatVector x0 = FloatVector.fromArray(S, p, pk), x1 = FloatVector.fromArray(S, p, pk + L);
            FloatVector v = FloatVector.broadcast(S, wr[k]);
            a0 = x0.fma(v, a0);
            b0 = x1.fma(v, b0);
            v = FloatVector.broadcast(S, wr[w1 + k]);
            a1 = x0.fma(v, a1);
            b1 = x1.fma(v, b1);
            v = FloatVector.broadcast(S, wr[w2 + k]);
            a2 = x0.fma(v, a2);
            b2 = x1.fma(v, b2);
            v = FloatVector.broadcast(S, wr[w3 + k]);
            a3 = x0.fma(v, a3);
            b3 = x1.fma(v, b3);
        }
        a0.intoArray(tile, 0);
        b0.intoArray(tile, L);
        a1.intoArray(tile, B);
        b1.intoArray(tile, B + L);
        a2.intoArray(tile, 2 * B);
        b2.intoArray(tile, 2 * B + L);
        a3.intoArray(tile, 3 * B);
        b3.intoArray(tile, 3 * B + L);
    }

    /** As {@link #tile4x2} for 8 weight rows: 16 accumulators, enough independent FMA chains to hide their latency. */
    private static void tile8x2(float[] wr, int in, float[] p, int pOff, float[] tile) {
        FloatVector a0 = FloatVector.zero(S), b0 = a0, a1 = a0, b1 = a0, a2 = a0, b2 = a0, a3 = a0, b3 = a0;
        FloatVector a4 = a0, b4 = a0, a5 = a0, b5 = a0, a6 = a0, b6 = a0, a7 = a0, b7 = a0;
        int w1 = in, w2 = 2 * in, w3 = 3 * in, w4 = 4 * in, w5 = 5 * in, w6 = 6 * in, w7 = 7 * in;
        for (int k = 0, pk = pOff; k < in; k++, pk += B) {
            FloatVector x0 = FloatVector.fromArray(S, p, pk), x1 = FloatVector.fromArray(S, p, pk + L);
            FloatVector v = FloatVector.broadcast(S, wr[k]);
            a0 = x0.fma(v, a0);
            b0 = x1.fma(v, b0);
            v = FloatVector.broadcast(S, wr[w1 + k]);
            a1 = x0.fma(v, a1);
            b1 = x1.fma(v, b1);
            v = FloatVector.broadcast(S, wr[w2 + k]);
            a2 = x0.fma(v, a2);
            b2 = x1.fma(v, b2);
            v = FloatVector.broadcast(S, wr[w3 + k]);
            a3 = x0.fma(v, a3);
            b3 = x1.fma(v, b3);
            v = FloatVector.broadcast(S, wr[w4 + k]);
            a4 = x0.fma(v, a4);
            b4 = x1.fma(v, b4);
            v = FloatVector.broadcast(S, wr[w5 + k]);
            a5 = x0.fma(v, a5);
            b5 = x1.fma(v, b5);
            v = FloatVector.broadcast(S, wr[w6 + k]);
            a6 = x0.fma(v, a6);
            b6 = x1.fma(v, b6);
            v = FloatVector.broadcast(S, wr[w7 + k]);
            a7 = x0.fma(v, a7);
            b7 = x1.fma(v, b7);
        }
        a0.intoArray(tile, 0);
        b0.intoArray(tile, L);
        a1.intoArray(tile, B);
        b1.intoArray(tile, B + L);
        a2.intoArray(tile, 2 * B);
        b2.intoArray(tile, 2 * B + L);
        a3.intoArray(tile, 3 * B);
        b3.intoArray(tile, 3 * B + L);
        a4.intoArray(tile, 4 * B);
        b4.intoArray(tile, 4 * B + L);
        a5.intoArray(tile, 5 * B);
        b5.intoArray(tile, 5 * B + L);
        a6.intoArray(tile, 6 * B);
        b6.intoArray(tile, 6 * B + L);
        a7.intoArray(tile, 7 * B);
        b7.intoArray(tile, 7 * B + L);
    }

    /**
     * As {@link #tile8x2(float[], int, float[], int, float[])} with the 8 weight rows read straight
     * from the float32 segment (row {@code q} at byte {@code o + q * rowBytes}): no copy to the heap,
     * so the weights' reads from memory are spread over the FMAs instead of coming all at once
     * before them (15M classifier, 32 rows, weights not in cache: 53-58 against 45-47 multiply-adds
     * per ns of CPU in most rounds of one JVM). The same FMAs in the same order: the same outputs.
     */
    private static void tile8x2(MemorySegment w, long o, long rowBytes, int in, float[] p, int pOff, float[] tile) {
        FloatVector a0 = FloatVector.zero(S), b0 = a0, a1 = a0, b1 = a0, a2 = a0, b2 = a0, a3 = a0, b3 = a0;
        FloatVector a4 = a0, b4 = a0, a5 = a0, b5 = a0, a6 = a0, b6 = a0, a7 = a0, b7 = a0;
        long o1 = o + rowBytes, o2 = o1 + rowBytes, o3 = o2 + rowBytes, o4 = o3 + rowBytes, o5 = o4 + rowBytes;
        long o6 = o5 + rowBytes, o7 = o6 + rowBytes;
        for (int k = 0, pk = pOff; k < in; k++, pk += B) {
            long kb = (long) k * Float.BYTES;
            FloatVector x0 = FloatVector.fromArray(S, p, pk), x1 = FloatVector.fromArray(S, p, pk + L);
            FloatVector v = FloatVector.broadcast(S, w.get(F32, o + kb));
            a0 = x0.fma(v, a0);
            b0 = x1.fma(v, b0);
            v = FloatVector.broadcast(S, w.get(F32, o1 + kb));
            a1 = x0.fma(v, a1);
            b1 = x1.fma(v, b1);
            v = FloatVector.broadcast(S, w.get(F32, o2 + kb));
            a2 = x0.fma(v, a2);
            b2 = x1.fma(v, b2);
            v = FloatVector.broadcast(S, w.get(F32, o3 + kb));
            a3 = x0.fma(v, a3);
            b3 = x1.fma(v, b3);
            v = FloatVector.broadcast(S, w.get(F32, o4 + kb));
            a4 = x0.fma(v, a4);
            b4 = x1.fma(v, b4);
            v = FloatVector.broadcast(S, w.get(F32, o5 + kb));
            a5 = x0.fma(v, a5);
            b5 = x1.fma(v, b5);
            v = FloatVector.broadcast(S, w.get(F32, o6 + kb));
            a6 = x0.fma(v, a6);
            b6 = x1.fma(v, b6);
            v = FloatVector.broadcast(S, w.get(F32, o7 + kb));
            a7 = x0.fma(v, a7);
            b7 = x1.fma(v, b7);
        }
        a0.intoArray(tile, 0);
        b0.intoArray(tile, L);
        a1.intoArray(tile, B);
        b1.intoArray(tile, B + L);
        a2.intoArray(tile, 2 * B);
        b2.intoArray(tile, 2 * B + L);
        a3.intoArray(tile, 3 * B);
        b3.intoArray(tile, 3 * B + L);
        a4.intoArray(tile, 4 * B);
        b4.intoArray(tile, 4 * B + L);
        a5.intoArray(tile, 5 * B);
        b5.intoArray(tile, 5 * B + L);
        a6.intoArray(tile, 6 * B);
        b6.intoArray(tile, 6 * B + L);
        a7.intoArray(tile, 7 * B);
        b7.intoArray(tile, 7 * B + L);
    }

    /** As {@link #tile4x2} for a block of L batch rows (the last one), weight rows from {@code wr[wOff..]}: tile[q * B + 0..L-1]. */
    private static void tile4x1(float[] wr, int wOff, int in, float[] p, int pOff, float[] tile) {
        FloatVector a0 = FloatVector.zero(S), a1 = a0, a2 = a0, a3 = a0;
        int w1 = wOff + in, w2 = wOff + 2 * in, w3 = wOff + 3 * in;
        for (int k = 0, pk = pOff; k < in; k++, pk += L) {
            FloatVector x0 = FloatVector.fromArray(S, p, pk);
            a0 = x0.fma(FloatVector.broadcast(S, wr[wOff + k]), a0);
            a1 = x0.fma(FloatVector.broadcast(S, wr[w1 + k]), a1);
            a2 = x0.fma(FloatVector.broadcast(S, wr[w2 + k]), a2);
            a3 = x0.fma(FloatVector.broadcast(S, wr[w3 + k]), a3);
        }
        a0.intoArray(tile, 0);
        a1.intoArray(tile, B);
        a2.intoArray(tile, 2 * B);
        a3.intoArray(tile, 3 * B);
    }
}

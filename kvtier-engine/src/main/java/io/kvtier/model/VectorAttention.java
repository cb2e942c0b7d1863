package io.kvtier.model;

import io.kvtier.model.tensor.Lanes;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * The attention kernels of {@link VectorKernels} over a run of KV slots ({@link Kernels#scoresBlock},
 * {@link Kernels#weightedSumBlock}): a block's slots are consecutive rows of {@code kvDim} floats,
 * so one call does every head of the range over up to a block of positions.
 *
 * <p><b>Scores without a lane reduction per position.</b> A head's score at a slot is a dot product
 * of {@code n} floats: {@code n / L} FMAs into one vector of partial sums, whose lanes must then be
 * added. One {@code reduceLanes} per (slot, head) was most of the cost (15M shape: 6 heads of 48
 * floats, 3 FMAs and a 16-lane reduction each). Here the partial-sum vectors of {@code L}
 * consecutive slots are added together in a transposing tree: two vectors {@code a}, {@code b} become
 * one whose lanes with bit {@code d} clear hold {@code a[l] + a[l ^ d]} and the others
 * {@code b[l] + b[l ^ d]} (two blends, one lane permutation, one add); after {@code log2 L} levels
 * ({@code d = 1, 2, 4, ..}) lane {@code l} holds the whole sum of slot {@code l}, and the {@code L}
 * scores are one vector store. That is {@code L - 1} merges instead of {@code L} reductions of
 * {@code log2 L} dependent shuffle-adds each, and the merges of different slots are independent.
 * Slots past the last whole group of {@code L} take the per-slot reduction.
 *
 * <p><b>Weighted sums in registers.</b> The outputs of the heads ({@code (hTo - hFrom) * n} floats)
 * are taken 4 vectors at a time, each accumulated over all the run's slots in a register, then
 * stored: one load and one store of the output per run instead of per slot. Each output float is
 * still {@code fma(v, w, y)} slot after slot in order, so the result is bit for bit that of
 * {@link VectorKernels#weightedSumRow} slot by slot.
 *
 * <p><b>Heads narrower than a vector</b> ({@code n < L}, a multiple of 4: stories260K's 8 floats
 * at 512 bits) take the same two kernels with masked loads and stores of {@code n} lanes, the
 * other lanes zero: a score is then one masked FMA per slot and the tree as above (adding only
 * zeros for the masked lanes), a weighted sum one masked accumulator per head. Without this they
 * took the per-slot kernels (a lane reduction per slot and head, bounds checks not hoisted):
 * about 70% of a stories260K step at 512 bits. Each output lane gets the same operations in the
 * same order as with 256-bit vectors, so the values are those of the 256-bit kernels.
 *
 * <p>As in {@link VectorKernels}, no vector crosses a method boundary, and a vector carried from
 * trip to trip is an argument of the operation that updates it, never its receiver.
 */
final class VectorAttention {

    private static final VectorSpecies<Float> S = VectorKernels.S;
    private static final int L = S.length();
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    /** Lanes whose index has bit d set (d = 1, 2, 4, 8), and the permutation l -> l ^ d. */
    private static final VectorMask<Float> M1 = bits(1), M2 = bits(2), M4 = bits(4), M8 = bits(8);
    /** Per-thread scratch of {@link #scoresBlock}: L vectors. */
    private static final ThreadLocal<float[]> TREE = ThreadLocal.withInitial(() -> new float[L * L]);

    /** The calling thread's scratch made ({@link Kernels#prepareThread}). */
    static void prepareThread() {
        TREE.get();
    }
    private static final VectorShuffle<Float> P1 = swap(1), P2 = swap(2), P4 = swap(4), P8 = swap(8);

    private VectorAttention() {
    }

    private static VectorMask<Float> bits(int d) {
        boolean[] lanes = new boolean[L];
        for (int l = 0; l < L; l++) {
            lanes[l] = (l & d) != 0;
        }
        return VectorMask.fromArray(S, lanes, 0);
    }

    private static VectorShuffle<Float> swap(int d) {
        return d < L ? VectorShuffle.fromOp(S, l -> l ^ d) : VectorShuffle.iota(S, 0, 1, true);
    }

    /**
     * Whether heads of {@code n} floats are whole vectors, or narrower than one and a multiple of
     * 4 (masked); else the row-by-row kernels.
     */
    static boolean fits(int n) {
        return n % L == 0 || narrow(n);
    }

    /** Whether heads of {@code n} floats take one masked vector each. */
    private static boolean narrow(int n) {
        return n < L && n % 4 == 0;
    }

    /**
     * As {@link Kernels#scoresBlock}: for each head {@code h} in {@code hFrom..hTo-1} and slot
     * {@code i < count}, {@code scores[sOff + (h - hFrom) * sStride + i] = scale * K_i[h / group] . q[h]}.
     * Requires {@link #fits}{@code (n)}.
     */
    static void scoresBlock(MemorySegment k, long rowByteOff, long slotBytes, int count, int hFrom, int hTo, int group,
                            int n, float[] q, int qOff, float scale, float[] scores, int sOff, int sStride) {
        int whole = count - count % L;
        float[] tmp = TREE.get();                    // [L slots][L lanes] of partial sums, then the tree's levels
        boolean narrow = narrow(n);
        VectorMask<Float> m = S.indexInRange(0, Math.min(n, L));
        for (int h = hFrom, si = sOff; h < hTo; h++, si += sStride) {
            long ho = rowByteOff + (long) (h / group) * n * Float.BYTES;
            int qh = qOff + h * n;
            FloatVector qn = narrow ? FloatVector.fromArray(S, q, qh, m) : FloatVector.zero(S);
            for (int i0 = 0; i0 < whole; i0 += L) {
                long o = ho + i0 * slotBytes;
                for (int i = 0; i < L; i++, o += slotBytes) {
                    FloatVector d = FloatVector.zero(S);
                    if (narrow) {
                        d = FloatVector.fromMemorySegment(S, k, o, LE, m).fma(qn, d);
                    } else {
                        for (int j = 0; j < n; j += L) {
                            d = FloatVector.fromMemorySegment(S, k, o + (long) j * Float.BYTES, LE).fma(FloatVector.fromArray(S, q, qh + j), d);
                        }
                    }
                    d.intoArray(tmp, i * L);
                }
                // Level d merges rows 2i and 2i+1 into row i: lanes with bit d clear from row 2i.
                for (int i = 0; i < L / 2; i++) {
                    FloatVector a = FloatVector.fromArray(S, tmp, 2 * i * L), b = FloatVector.fromArray(S, tmp, (2 * i + 1) * L);
                    a.blend(b, M1).add(b.blend(a, M1).rearrange(P1)).intoArray(tmp, i * L);
                }
                for (int i = 0; i < L / 4; i++) {
                    FloatVector a = FloatVector.fromArray(S, tmp, 2 * i * L), b = FloatVector.fromArray(S, tmp, (2 * i + 1) * L);
                    a.blend(b, M2).add(b.blend(a, M2).rearrange(P2)).intoArray(tmp, i * L);
                }
                for (int i = 0; i < L / 8; i++) {
                    FloatVector a = FloatVector.fromArray(S, tmp, 2 * i * L), b = FloatVector.fromArray(S, tmp, (2 * i + 1) * L);
                    a.blend(b, M4).add(b.blend(a, M4).rearrange(P4)).intoArray(tmp, i * L);
                }
                for (int i = 0; i < L / 16; i++) {
                    FloatVector a = FloatVector.fromArray(S, tmp, 2 * i * L), b = FloatVector.fromArray(S, tmp, (2 * i + 1) * L);
                    a.blend(b, M8).add(b.blend(a, M8).rearrange(P8)).intoArray(tmp, i * L);
                }
                FloatVector.fromArray(S, tmp, 0).mul(scale).intoArray(scores, si + i0);
            }
            for (int i = whole; i < count; i++) {
                long o = ho + i * slotBytes;
                FloatVector d = FloatVector.zero(S);
                if (narrow) {
                    d = FloatVector.fromMemorySegment(S, k, o, LE, m).fma(qn, d);
                } else {
                    for (int j = 0; j < n; j += L) {
                        d = FloatVector.fromMemorySegment(S, k, o + (long) j * Float.BYTES, LE).fma(FloatVector.fromArray(S, q, qh + j), d);
                    }
                }
                scores[si + i] = Lanes.sum(d) * scale;
            }
        }
    }

    /**
     * As {@link Kernels#weightedSumBlock}: for each head {@code h} in {@code hFrom..hTo-1},
     * {@code y[yOff + h * n + j] += sum_i w[wOff + (h - hFrom) * wStride + i] * V_i[h / group][j]},
     * slot after slot. Requires {@link #fits}{@code (n)}.
     */
    static void weightedSumBlock(MemorySegment v, long rowByteOff, long slotBytes, int count, int hFrom, int hTo,
                                 int group, int n, float[] w, int wOff, int wStride, float[] y, int yOff) {
        if (narrow(n)) {
            VectorMask<Float> m = S.indexInRange(0, n);
            for (int h = hFrom, wi = wOff; h < hTo; h++, wi += wStride) {
                int yh = yOff + h * n;
                FloatVector a0 = FloatVector.fromArray(S, y, yh, m);
                long r = rowByteOff + (long) (h / group) * n * Float.BYTES;
                for (int i = 0; i < count; i++, r += slotBytes) {
                    a0 = FloatVector.fromMemorySegment(S, v, r, LE, m).fma(FloatVector.broadcast(S, w[wi + i]), a0);
                }
                a0.intoArray(y, yh, m);
            }
            return;
        }
        int vectors = (hTo - hFrom) * n / L;           // output vectors of the head range, in order
        int yBase = yOff + hFrom * n;
        int c = 0;
        for (; c + 4 <= vectors; c += 4) {
            long v0 = valueOffset(c, hFrom, group, n), v1 = valueOffset(c + 1, hFrom, group, n);
            long v2 = valueOffset(c + 2, hFrom, group, n), v3 = valueOffset(c + 3, hFrom, group, n);
            int w0 = weightIndex(c, wOff, wStride, n), w1 = weightIndex(c + 1, wOff, wStride, n);
            int w2 = weightIndex(c + 2, wOff, wStride, n), w3 = weightIndex(c + 3, wOff, wStride, n);
            int yc = yBase + c * L;
            FloatVector a0 = FloatVector.fromArray(S, y, yc), a1 = FloatVector.fromArray(S, y, yc + L);
            FloatVector a2 = FloatVector.fromArray(S, y, yc + 2 * L), a3 = FloatVector.fromArray(S, y, yc + 3 * L);
            long r = rowByteOff;
            for (int i = 0; i < count; i++, r += slotBytes) {
                a0 = FloatVector.fromMemorySegment(S, v, r + v0, LE).fma(FloatVector.broadcast(S, w[w0 + i]), a0);
                a1 = FloatVector.fromMemorySegment(S, v, r + v1, LE).fma(FloatVector.broadcast(S, w[w1 + i]), a1);
                a2 = FloatVector.fromMemorySegment(S, v, r + v2, LE).fma(FloatVector.broadcast(S, w[w2 + i]), a2);
                a3 = FloatVector.fromMemorySegment(S, v, r + v3, LE).fma(FloatVector.broadcast(S, w[w3 + i]), a3);
            }
            a0.intoArray(y, yc);
            a1.intoArray(y, yc + L);
            a2.intoArray(y, yc + 2 * L);
            a3.intoArray(y, yc + 3 * L);
        }
        for (; c < vectors; c++) {
            long v0 = valueOffset(c, hFrom, group, n);
            int w0 = weightIndex(c, wOff, wStride, n);
            int yc = yBase + c * L;
            FloatVector a0 = FloatVector.fromArray(S, y, yc);
            long r = rowByteOff;
            for (int i = 0; i < count; i++, r += slotBytes) {
                a0 = FloatVector.fromMemorySegment(S, v, r + v0, LE).fma(FloatVector.broadcast(S, w[w0 + i]), a0);
            }
            a0.intoArray(y, yc);
        }
    }

    /** Byte offset within a slot's row of the values that output vector {@code c} (of the head range) reads. */
    private static long valueOffset(int c, int hFrom, int group, int n) {
        int h = hFrom + c * L / n;
        return ((long) (h / group) * n + c * L % n) * Float.BYTES;
    }

    /** Index in {@code w} of the first slot's weight of the head of output vector {@code c}. */
    private static int weightIndex(int c, int wOff, int wStride, int n) {
        return wOff + c * L / n * wStride;
    }
}

package io.kvtier.model;

import java.lang.foreign.MemorySegment;

/**
 * The numeric kernels of the forward pass. Weights are float32 little-endian in a
 * {@link MemorySegment} (the model file's bytes, or the KV slab), row-major {@code [out][in]};
 * activations are heap {@code float[]} with explicit offsets. Two implementations:
 * {@link ScalarKernels}, plain loops that are obviously right, and {@link VectorKernels}
 * ({@code jdk.incubator.vector}); they agree to within float rounding (the vector ones sum in a
 * different order), which the differential tests bound.
 *
 * <p>Implementations are stateless and thread-safe; callers split work across threads by
 * output rows ({@code rowFrom..rowTo}).
 */
public interface Kernels {

    /** Short name for reports, e.g. {@code scalar} or {@code vector-512}. */
    String name();

    /**
     * Makes the calling thread's scratch of these kernels (the vector kernels keep some per
     * thread), so that its first product or attention does not take the path of a thread
     * without it. Called by each thread that will run steps, before its first: the runner's
     * builder and its pool's workers. That path, seen by the JIT only in a warm-up's first
     * interpreted steps, was compiled as never taken: a fresh {@code generate}'s first step then
     * hit an uncommon trap in the attention kernel and ran it in C1 until compiled again.
     * Nothing for kernels without per-thread state.
     */
    default void prepareThread() {
    }

    /** {@code sum_i a[aOff+i] * b[bOff+i]} for {@code i < n}. */
    float dot(float[] a, int aOff, float[] b, int bOff, int n);

    /** {@code sum_i a_i * b[bOff+i]}, where {@code a_i} is the float at byte {@code aByteOff + 4i} of {@code a}. */
    float dot(MemorySegment a, long aByteOff, float[] b, int bOff, int n);

    /** {@code y[yOff+i] += alpha * x_i} for {@code i < n}, {@code x_i} at byte {@code xByteOff + 4i} of {@code x}. */
    void axpy(float alpha, MemorySegment x, long xByteOff, float[] y, int yOff, int n);

    /**
     * Attention scores over {@code count} keys spaced {@code strideBytes} apart (the slots of one
     * KV block): {@code scores[sOff+i] = scale * sum_j k_i[j] * q[qOff+j]}, {@code j < n}, where
     * {@code k_i} starts at byte {@code kByteOff + i * strideBytes} of {@code k}.
     */
    void scores(MemorySegment k, long kByteOff, long strideBytes, int count, float[] q, int qOff, int n,
                float scale, float[] scores, int sOff);

    /**
     * Weighted sum of {@code count} values spaced {@code strideBytes} apart:
     * {@code y[yOff+j] += sum_i w[wOff+i] * v_i[j]}, {@code j < n}, where {@code v_i} starts at byte
     * {@code vByteOff + i * strideBytes} of {@code v}.
     */
    void weightedSum(MemorySegment v, long vByteOff, long strideBytes, int count, float[] w, int wOff,
                     float[] y, int yOff, int n);

    /**
     * Scores of query heads {@code hFrom..hTo-1} against one KV slot: for each head {@code h},
     * {@code scores[sOff + (h - hFrom) * sStride] = scale * sum_j k[(h / group) * n + j] * q[qOff + h * n + j]},
     * {@code j < n}, where {@code k} is the slot's row of keys (all kv heads, {@code n} floats each)
     * at byte {@code rowByteOff} and {@code group} query heads share a kv head. As {@link #scores}
     * of one key per head; for the slot-by-slot order of attention (one sequential read of a
     * token's context for all its heads). By default exactly that.
     */
    default void scoresRow(MemorySegment k, long rowByteOff, int hFrom, int hTo, int group, int n, float[] q, int qOff,
                           float scale, float[] scores, int sOff, int sStride) {
        for (int h = hFrom; h < hTo; h++) {
            scores(k, rowByteOff + (long) (h / group) * n * Float.BYTES, 0, 1, q, qOff + h * n, n, scale, scores,
                    sOff + (h - hFrom) * sStride);
        }
    }

    /**
     * Weighted values of one KV slot into the outputs of query heads {@code hFrom..hTo-1}: for each
     * head {@code h}, {@code y[yOff + h * n + j] += w[wOff + (h - hFrom) * wStride] * v[(h / group) * n + j]},
     * {@code j < n}, where {@code v} is the slot's row of values at byte {@code rowByteOff}. As
     * {@link #weightedSum} of one value per head, with the same arithmetic per output float (so
     * summing slot by slot gives what summing head by head gave). By default exactly that.
     */
    default void weightedSumRow(MemorySegment v, long rowByteOff, int hFrom, int hTo, int group, int n, float[] w,
                                int wOff, int wStride, float[] y, int yOff) {
        for (int h = hFrom; h < hTo; h++) {
            weightedSum(v, rowByteOff + (long) (h / group) * n * Float.BYTES, 0, 1, w, wOff + (h - hFrom) * wStride,
                    y, yOff + h * n, n);
        }
    }

    /**
     * {@link #scoresRow} over {@code count} consecutive KV slots, slot {@code i}'s row at byte
     * {@code rowByteOff + i * slotBytes} (the slots of one block): for each head {@code h} and
     * {@code i < count}, {@code scores[sOff + (h - hFrom) * sStride + i] = scale * k_i[h / group] . q[h]}.
     * By default {@link #scoresRow} slot by slot; the vector kernels add the lanes of several slots
     * together instead of reducing each ({@link VectorAttention}), so their sums are in another order.
     */
    default void scoresBlock(MemorySegment k, long rowByteOff, long slotBytes, int count, int hFrom, int hTo, int group,
                             int n, float[] q, int qOff, float scale, float[] scores, int sOff, int sStride) {
        for (int i = 0; i < count; i++) {
            scoresRow(k, rowByteOff + i * slotBytes, hFrom, hTo, group, n, q, qOff, scale, scores, sOff + i, sStride);
        }
    }

    /**
     * {@link #weightedSumRow} over {@code count} consecutive KV slots (rows {@code slotBytes} apart
     * from byte {@code rowByteOff}), in slot order: for each head {@code h},
     * {@code y[yOff + h * n + j] += sum_i w[wOff + (h - hFrom) * wStride + i] * v_i[h / group][j]}.
     * Every implementation gives bit for bit what its {@link #weightedSumRow} gives slot by slot.
     */
    default void weightedSumBlock(MemorySegment v, long rowByteOff, long slotBytes, int count, int hFrom, int hTo,
                                  int group, int n, float[] w, int wOff, int wStride, float[] y, int yOff) {
        for (int i = 0; i < count; i++) {
            weightedSumRow(v, rowByteOff + i * slotBytes, hFrom, hTo, group, n, w, wOff + i, wStride, y, yOff);
        }
    }

    /**
     * Matrix-vector product for output rows {@code rowFrom..rowTo-1}:
     * {@code y[yOff+r] = sum_k W[r][k] * x[xOff+k]}, W {@code [out][in]} in {@code w}.
     */
    void matvec(MemorySegment w, int in, float[] x, int xOff, float[] y, int yOff, int rowFrom, int rowTo);

    /**
     * Batched product {@code Y = X W^T} for output columns {@code rowFrom..rowTo-1}:
     * W {@code [out][in]} in {@code w}; X {@code [n][in]} in {@code x} (row stride {@code in});
     * Y {@code [n][out]} in {@code y} (row stride {@code out}); {@code Y[i][r] = sum_k W[r][k] X[i][k]}.
     * Each weight row is read from memory once for all {@code n} activation rows.
     */
    void matmul(MemorySegment w, int in, int out, float[] x, int n, float[] y, int rowFrom, int rowTo);

    /**
     * Floats of the buffer {@link #packRows} fills for {@code n} activation rows of {@code in}
     * floats (at least {@code n * in}). By default the layout is {@code x}'s own: {@code n * in}.
     */
    default int packedLength(int n, int in) {
        return n * in;
    }

    /**
     * Copies {@code x[n][in]} (row stride {@code in}) into {@code packed} (at least
     * {@link #packedLength} floats) in the layout {@link #matmulPacked} reads; the layout is the
     * kernels' own (the vector kernels transpose batches of a vector of rows or more; by default a
     * plain copy).
     */
    default void packRows(float[] x, int n, int in, float[] packed) {
        System.arraycopy(x, 0, packed, 0, n * in);
    }

    /**
     * {@link #matmul} over activations packed by {@link #packRows} with the same {@code n} and
     * {@code in}: the form for a product split across threads, which packs once per call instead
     * of once per part. By default {@link #matmul} itself, for the default (unchanged) layout.
     */
    default void matmulPacked(MemorySegment w, int in, int out, float[] packed, int n, float[] y, int rowFrom, int rowTo) {
        matmul(w, in, out, packed, n, y, rowFrom, rowTo);
    }

    /**
     * RMS normalisation as llama2.c: {@code out_i = weight_i * x_i / sqrt(mean(x^2) + eps)};
     * {@code weight} is {@code n} floats at byte 0 of the segment. {@code out} may alias {@code x}.
     */
    void rmsnorm(float[] out, int outOff, float[] x, int xOff, MemorySegment weight, int n, float eps);

    /** In-place softmax over {@code x[off..off+n-1]}, max-subtracted for stability. */
    void softmax(float[] x, int off, int n);

    /** In place: {@code x_i = x_i * sigmoid(x_i)}. */
    void silu(float[] x, int off, int n);

    /** SwiGLU gate in place: {@code gate_i = silu(gate_i) * up_i}. */
    void swiglu(float[] gate, int gOff, float[] up, int uOff, int n);

    /** {@code y[yOff+i] += x[xOff+i]} (residual connection). */
    void add(float[] y, int yOff, float[] x, int xOff, int n);

    /**
     * These kernels with every result the same in every JIT tier (the batch-invariant mode):
     * the vector kernels' {@code lanewise(EXP)} is C2's vector math library when compiled and
     * {@link Math#exp} per lane before, which differ in the last bit, so their softmax, silu and
     * swiglu take {@link Math#exp} per value (one stub in every tier). This by default.
     */
    default Kernels batchInvariant() {
        return this;
    }

    /** The plain-loop reference kernels. */
    static Kernels scalar() {
        return ScalarKernels.INSTANCE;
    }

    /**
     * The fastest kernels available: {@link VectorKernels} (width from the system property
     * {@code kvtier.vector.bits} = 128/256/512, default the CPU's preferred width) when the
     * {@code jdk.incubator.vector} module is present, else {@link #scalar()}.
     *
     * @throws IllegalArgumentException when {@code kvtier.vector.bits} is set to another value
     */
    static Kernels best() {
        String bits = System.getProperty("kvtier.vector.bits");
        if (bits != null && !bits.isBlank() && !java.util.Set.of("128", "256", "512").contains(bits.strip())) {
            throw new IllegalArgumentException("kvtier.vector.bits must be 128, 256 or 512, got '" + bits + "'");
        }
        if (ModuleLayer.boot().findModule("jdk.incubator.vector").isEmpty()) {
            return scalar();
        }
        return VectorKernels.INSTANCE;
    }
}

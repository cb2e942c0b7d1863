package io.kvtier.model;

import io.kvtier.model.tensor.Q8Activations;
import io.kvtier.model.tensor.QuantMatmul;
import io.kvtier.model.tensor.TensorType;
import io.kvtier.model.tensor.Weight;

/**
 * The input {@code x[n][cols]} of one or several products {@code y = x W^T}, prepared once for
 * every part of the pool that computes their rows: for F32 weights packed in the kernels' layout
 * ({@code f32}), for encoded ones in {@link PackedMatmul}'s ({@code decoded}, null below a
 * vector of rows), and quantized to Q8_0 blocks for the weights {@link QuantMatmul#int8} accepts ({@code q8}, null
 * unless such weights meet {@link QuantActivations#Q8_0}, whatever the rows). The arrays are
 * the scratch of an {@link Activations}: valid until the next preparation.
 *
 * <p>{@link #rowByRow} prepares for the batch-invariant mode instead: every activation row goes
 * through the one-row kernels whatever {@code n}, so an output's bits do not depend on the rows
 * beside it.
 */
record PreparedInput(float[] x, int n, float[] f32, float[] decoded, Q8Activations q8, boolean oneRowKernels) {

    /** Prepares {@code x[n][ws[0].cols()]} for products with {@code ws}, in {@code a}'s scratch. */
    static PreparedInput of(float[] x, int n, Weight[] ws, Kernels kernels, Activations a, QuantActivations activations) {
        boolean f32 = false;
        boolean encoded = false;
        boolean int8 = false;
        for (Weight wt : ws) {
            f32 |= wt.type() == TensorType.F32;
            encoded |= wt.type() != TensorType.F32 && !wt.interleaved();   // an interleaved weight takes x unpacked
            int8 |= QuantMatmul.int8(wt);
        }
        int in = ws[0].cols();
        float[] packed = f32 ? a.packed(kernels.packedLength(n, in)) : x;
        if (f32) {
            kernels.packRows(x, n, in, packed);
        }
        float[] packedDecoded = null;
        if (encoded && PackedMatmul.packs(n)) {
            packedDecoded = a.packedForDecoded(PackedMatmul.packedLength(n, in));
            PackedMatmul.pack(x, n, in, packedDecoded);
        }
        // Products with Q8_0 or interleaved Q4_0 weights: x quantized once here, as llama.cpp does,
        // in prefill and batches too (float tiles there made a request's tokens follow neither of
        // llama.cpp's arithmetics: its prompt in float32, its decode steps in int8).
        Q8Activations q8 = null;
        if (int8 && activations == QuantActivations.Q8_0) {
            q8 = a.q8;
            q8.quantize(x, n, in);
        }
        return new PreparedInput(x, n, packed, packedDecoded, q8, false);
    }

    /**
     * Prepares {@code x[n][ws[0].cols()]} for the batch-invariant mode: nothing packed; the rows
     * quantized to Q8_0 for the weights {@link QuantMatmul#int8} accepts when {@code activations}
     * is {@link QuantActivations#Q8_0}, and always for an interleaved weight (its only one-row kernel
     * takes Q8_0 activations), whatever {@code n}, as a decode step of one row does.
     */
    static PreparedInput rowByRow(float[] x, int n, Weight[] ws, Activations a, QuantActivations activations) {
        boolean quantize = false;
        for (Weight wt : ws) {
            quantize |= wt.interleaved() || (QuantMatmul.int8(wt) && activations == QuantActivations.Q8_0);
        }
        Q8Activations q8 = null;
        if (quantize) {
            q8 = a.q8;
            q8.quantize(x, n, ws[0].cols());
        }
        return new PreparedInput(x, n, null, null, q8, true);
    }

    /** Output rows {@code from..to-1} of {@code y[n][rows] = x[n][cols] wt^T}. */
    void rows(Weight wt, Kernels kernels, float[] y, int from, int to) {
        if (oneRowKernels) {
            oneRow(wt, kernels, y, from, to);
        } else if (wt.type() == TensorType.F32) {
            kernels.matmulPacked(wt.data(), wt.cols(), wt.rows(), f32, n, y, from, to);
        } else if (q8 != null && QuantMatmul.int8(wt)) {
            QuantMatmul.matmul(wt, q8, n, y, from, to);
        } else if (decoded != null && !wt.interleaved()) {   // interleaved: its own tiles, lanes = rows
            PackedMatmul.matmul(wt, decoded, n, y, from, to);
        } else {
            QuantMatmul.matmul(wt, x, n, y, from, to);
        }
    }

    /** {@link #rows} in the batch-invariant mode: activation row by activation row, the decode kernels. */
    private void oneRow(Weight wt, Kernels kernels, float[] y, int from, int to) {
        int cols = wt.cols();
        if (wt.type() == TensorType.F32) {
            for (int i = 0; i < n; i++) {
                kernels.matvec(wt.data(), cols, x, i * cols, y, i * wt.rows(), from, to);
            }
        } else if (q8 != null && (wt.interleaved() || QuantMatmul.int8(wt))) {
            QuantMatmul.matmul(wt, q8, n, y, from, to);
        } else {
            QuantMatmul.rowByRow(wt, x, n, y, from, to);
        }
    }
}

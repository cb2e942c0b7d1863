package io.kvtier.model;

/**
 * Scratch buffers of one forward pass, reused across steps: they grow to the largest batch seen
 * and are never shrunk, so a steady stream of steps allocates nothing here. Row-major, one row
 * per token of the step ({@code T} = tokens in the step).
 */
final class Activations {

    private final ModelConfig c;
    private int capacity;
    private int logitRows;

    /** Per token of the step: id, position, index of its chunk. */
    int[] token = new int[0], pos = new int[0], chunk = new int[0];
    /** Residual stream x, normed xb, projections: [T][dim]. */
    float[] x, xb;
    /** Attention output xb2 and queries q: [T][heads*headDim]; keys and values [T][kvDim]. */
    float[] xb2, q, k, v;
    /** RoPE cos/sin of every token's position, computed once per step: [T][ropeDim/2]; the sliding-window layers' own in {@code localCos}, {@code localSin}. */
    float[] cos, sin, localCos, localSin;
    private final int pairs;
    /** Feed-forward gate and up projections: [T][hidden]. */
    float[] hb, hb2;
    /** Attention scores, one buffer per participating thread, grown by {@link #att}. */
    private final float[][] att;
    /** Final-normed last tokens of chunks that want logits [C][dim], and their logits [C][vocab]. */
    float[] xLast = new float[0], logits = new float[0];
    /** The logits returned per chunk when the transformer reuses them ({@link Transformer#reuseLogitArrays}): [C][vocab]. */
    private float[][] logitArrays = new float[0][];
    /** The input of the current matrix product in the kernels' packed layout ({@link Kernels#packRows}). */
    private float[] packed = new float[0];
    /** The input of the current product with encoded weights in {@link PackedMatmul#pack}'s layout. */
    private float[] packedForDecoded = new float[0];
    /** The input of the current decode product with Q8_0 weights, quantized to Q8_0 blocks. */
    final io.kvtier.model.tensor.Q8Activations q8 = new io.kvtier.model.tensor.Q8Activations();

    Activations(ModelConfig c, int threads) {
        this.c = c;
        this.att = new float[threads][0];
        this.pairs = c.headDim() / 2;
        ensureTokens(1);
        // The packed inputs are sized up front for a vector of tokens (a short prompt's prefill,
        // then decode) at the widest matrix input: growing them in the first step took the branch
        // C2 had compiled as never taken (the warm-up's engines grew theirs before C2 profiled
        // it), which sent the step's matrix products back to C1 (boxed vectors) in the user's
        // first steps. L x (dim, qDim or hiddenDim) floats each; longer prompts still grow them.
        int widest = Math.max(c.dim(), Math.max(c.qDim(), c.hiddenDim()));
        int reserve = PackedMatmul.packedLength(1, widest);
        packed = new float[reserve];
        packedForDecoded = new float[reserve];
    }

    void ensureTokens(int tokens) {
        if (tokens <= capacity) {
            return;
        }
        int n = Math.max(tokens, capacity + capacity / 2);
        token = new int[n];
        pos = new int[n];
        chunk = new int[n];
        x = new float[n * c.dim()];
        xb = new float[n * c.dim()];
        xb2 = new float[n * c.qDim()];
        q = new float[n * c.qDim()];
        k = new float[n * c.kvDim()];
        v = new float[n * c.kvDim()];
        hb = new float[n * c.hiddenDim()];
        hb2 = new float[n * c.hiddenDim()];
        cos = new float[n * pairs];
        sin = new float[n * pairs];
        localCos = new float[n * pairs];
        localSin = new float[n * pairs];
        capacity = n;
    }

    /**
     * Thread {@code worker}'s score buffer, grown to at least {@code length} floats (heads of a
     * token times its positions). Only that worker's thread calls this while a range runs.
     */
    float[] att(int worker, int length) {
        if (att[worker].length < length) {
            att[worker] = new float[Math.max(length, c.seqLen())];
        }
        return att[worker];
    }

    /** The packed-input buffer, grown to at least {@code length} floats. */
    float[] packed(int length) {
        if (packed.length < length) {
            packed = new float[length];
        }
        return packed;
    }

    /** The buffer for {@link PackedMatmul#pack} of the input of encoded weights, grown to at least {@code length} floats. */
    float[] packedForDecoded(int length) {
        if (packedForDecoded.length < length) {
            packedForDecoded = new float[length];
        }
        return packedForDecoded;
    }

    /** Row {@code r}'s reused logits [vocab], allocated on first use and kept (overwritten by every later step). */
    float[] logitArray(int r) {
        if (r >= logitArrays.length) {
            logitArrays = java.util.Arrays.copyOf(logitArrays, Math.max(r + 1, 2 * logitArrays.length));
        }
        if (logitArrays[r] == null) {
            logitArrays[r] = new float[c.vocabSize()];
        }
        return logitArrays[r];
    }

    void ensureLogitRows(int rows) {
        if (rows <= logitRows) {
            return;
        }
        xLast = new float[rows * c.dim()];
        logits = new float[rows * c.vocabSize()];
        logitRows = rows;
    }
}

package io.kvtier.model;

import io.kvtier.kv.KvLayout;

/**
 * Shape of a Llama-architecture model as stored in a llama2.c checkpoint header.
 *
 * @param dim              width of the residual stream (floats per token)
 * @param hiddenDim        width of the SwiGLU feed-forward layer
 * @param layers           transformer layers
 * @param heads            query heads per layer; must divide {@code dim}
 * @param kvHeads          key/value heads per layer (grouped-query attention); must divide {@code heads}
 * @param vocabSize        tokens in the vocabulary (rows of the embedding and of the classifier)
 * @param seqLen           maximum sequence length (positions 0..seqLen-1)
 * @param sharedClassifier true when the classifier is the token embedding (no separate tensor)
 * @throws IllegalArgumentException when the shape is inconsistent (see {@link #problem})
 */
public record ModelConfig(int dim, int hiddenDim, int layers, int heads, int kvHeads, int vocabSize,
                          int seqLen, boolean sharedClassifier) {

    /** Upper bounds that no real checkpoint reaches; larger values mean a foreign or corrupt file. */
    static final int MAX_DIM = 1 << 16;
    static final int MAX_HIDDEN = 1 << 18;
    static final int MAX_LAYERS = 1024;
    static final int MAX_VOCAB = 1 << 22;
    static final int MAX_SEQ_LEN = 1 << 22;

    public ModelConfig {
        String problem = problem(dim, hiddenDim, layers, heads, kvHeads, vocabSize, seqLen);
        if (problem != null) {
            throw new IllegalArgumentException("invalid model config: " + problem);
        }
    }

    /**
     * What is wrong with these header values, or null when they describe a usable model. Kept
     * apart from the constructor so that {@link Checkpoint} can report it with the file name.
     */
    static String problem(int dim, int hiddenDim, int layers, int heads, int kvHeads, int vocabSize,
                          int seqLen) {
        String range = outOfRange("dim", dim, MAX_DIM);
        if (range == null) range = outOfRange("hidden_dim", hiddenDim, MAX_HIDDEN);
        if (range == null) range = outOfRange("n_layers", layers, MAX_LAYERS);
        if (range == null) range = outOfRange("n_heads", heads, dim);
        if (range == null) range = outOfRange("n_kv_heads", kvHeads, heads);
        if (range == null) range = outOfRange("vocab_size", vocabSize, MAX_VOCAB);
        if (range == null) range = outOfRange("seq_len", seqLen, MAX_SEQ_LEN);
        if (range != null) {
            return range;
        }
        if (dim % heads != 0) {
            return "n_heads " + heads + " does not divide dim " + dim;
        }
        if (heads % kvHeads != 0) {
            return "n_kv_heads " + kvHeads + " does not divide n_heads " + heads;
        }
        if ((dim / heads) % 2 != 0) {
            // Rotary embeddings rotate pairs of floats within a head.
            return "head size " + dim / heads + " (dim / n_heads) is odd; rotary embeddings need pairs";
        }
        return null;
    }

    private static String outOfRange(String field, int value, int max) {
        if (value <= 0 || value > max) {
            return "header field " + field + " = " + value + " is not plausible (expected 1.." + max + ")";
        }
        return null;
    }

    /** Floats per attention head: dim / heads. */
    public int headDim() {
        return dim / heads;
    }

    /** Floats of K (or V) per token per layer: kvHeads * headDim. */
    public int kvDim() {
        return kvHeads * headDim();
    }

    /** Query heads that share one key/value head. */
    public int kvGroup() {
        return heads / kvHeads;
    }

    /** The paged KV-cache layout for this model with {@code blockSize} positions per block. */
    public KvLayout kvLayout(int blockSize) {
        return new KvLayout(layers, kvHeads, headDim(), blockSize);
    }

    /**
     * Learned parameters (floats): embedding, per-layer norms and projections, final norm and,
     * when not shared, the classifier. The legacy RoPE tables of the file are not parameters.
     */
    public long parameterCount() {
        long d = dim;
        long perLayer = 2 * d                         // attention and FFN RMS weights
                + d * d                               // wq [heads*headDim][dim], heads*headDim == dim
                + 2 * (long) kvDim() * d              // wk, wv
                + d * d                               // wo
                + 3 * d * hiddenDim;                  // w1, w2, w3
        long params = (long) vocabSize * d + layers * perLayer + d;
        return sharedClassifier ? params : params + (long) vocabSize * d;
    }
}

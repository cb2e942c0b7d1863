package io.kvtier.model;

import io.kvtier.kv.KvLayout;

/**
 * Shape of a Llama-architecture model: the llama2.c checkpoint header, plus the head width,
 * which GGUF models may set apart from {@code dim / heads} (Qwen3: 4 heads of 16 in a width of 32).
 *
 * @param dim              width of the residual stream (floats per token)
 * @param hiddenDim        width of the SwiGLU feed-forward layer
 * @param layers           transformer layers
 * @param heads            query heads per layer; must divide {@code dim}
 * @param kvHeads          key/value heads per layer (grouped-query attention); must divide {@code heads}
 * @param vocabSize        tokens in the vocabulary (rows of the embedding and of the classifier)
 * @param seqLen           maximum sequence length (positions 0..seqLen-1)
 * @param sharedClassifier true when the classifier is the token embedding (no separate tensor)
 * @param headDim          floats per attention head (query, key and value); even
 * @throws IllegalArgumentException when the shape is inconsistent (see {@link #problem})
 */
public record ModelConfig(int dim, int hiddenDim, int layers, int heads, int kvHeads, int vocabSize,
                          int seqLen, boolean sharedClassifier, int headDim) {

    /**
     * Upper bounds that no real checkpoint reaches; larger values mean a foreign or corrupt file
     * (public so that {@code make-model} refuses them naming its own flags).
     */
    public static final int MAX_DIM = 1 << 16;
    public static final int MAX_HIDDEN = 1 << 18;
    public static final int MAX_LAYERS = 1024;
    public static final int MAX_VOCAB = 1 << 22;
    public static final int MAX_SEQ_LEN = 1 << 22;

    public ModelConfig {
        String problem = shapeProblem(dim, hiddenDim, layers, heads, kvHeads, vocabSize, seqLen, headDim);
        if (problem != null) {
            throw new IllegalArgumentException("invalid model config: " + problem);
        }
    }

    /** A llama2.c shape: heads of {@code dim / heads} floats. */
    public ModelConfig(int dim, int hiddenDim, int layers, int heads, int kvHeads, int vocabSize, int seqLen,
                       boolean sharedClassifier) {
        this(dim, hiddenDim, layers, heads, kvHeads, vocabSize, seqLen, sharedClassifier,
                heads > 0 && heads <= dim ? dim / heads : 0);
    }

    /**
     * What is wrong with a shape whose head width is given, or null when it is usable. Kept apart
     * from the constructor so that the GGUF loader can report it with the file name.
     */
    public static String shapeProblem(int dim, int hiddenDim, int layers, int heads, int kvHeads, int vocabSize,
                                      int seqLen, int headDim) {
        String range = outOfRange("dim", dim, MAX_DIM);
        if (range == null) range = outOfRange("hidden_dim", hiddenDim, MAX_HIDDEN);
        if (range == null) range = outOfRange("n_layers", layers, MAX_LAYERS);
        if (range == null) range = outOfRange("n_heads", heads, MAX_DIM);
        if (range == null) range = outOfRange("n_kv_heads", kvHeads, heads);
        if (range == null) range = outOfRange("vocab_size", vocabSize, MAX_VOCAB);
        if (range == null) range = outOfRange("seq_len", seqLen, MAX_SEQ_LEN);
        if (range == null) range = outOfRange("head_dim", headDim, MAX_DIM);
        if (range != null) {
            return range;
        }
        if (heads % kvHeads != 0) {
            return "n_kv_heads " + kvHeads + " does not divide n_heads " + heads;
        }
        if (headDim % 2 != 0) {
            return "head size " + headDim + " is odd; rotary embeddings need pairs";
        }
        return null;
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

    /** Floats of all query heads of a token: heads * headDim (dim for llama2.c shapes). */
    public int qDim() {
        return heads * headDim;
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
                + (long) qDim() * d                   // wq [heads*headDim][dim]
                + 2 * (long) kvDim() * d              // wk, wv
                + d * (long) qDim()                   // wo [dim][heads*headDim]
                + 3 * d * hiddenDim;                  // w1, w2, w3
        long params = (long) vocabSize * d + layers * perLayer + d;
        return sharedClassifier ? params : params + (long) vocabSize * d;
    }
}

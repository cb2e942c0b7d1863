package io.kvtier.model;

import io.kvtier.model.tensor.Weight;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

/**
 * The weights of a transformer that {@link Transformer} runs, whatever file they came from
 * (a llama2.c {@link Checkpoint} or a GGUF file): its shape, its family's {@link ArchSpec}, and
 * its tensors as slices of the file's bytes (read into memory once). Matrices are {@code [out][in]} in their file
 * encoding; vectors (norm weights, biases) are float32 little-endian.
 *
 * <p>Accessors may be called from any thread; {@link #close()} unmaps the file and must not race
 * with readers.
 */
public interface Model extends AutoCloseable {

    /** The projections of a layer. */
    enum Matrix {
        /** Query projection {@code [heads*headDim][dim]}. */
        Q,
        /** Key projection {@code [kvHeads*headDim][dim]}. */
        K,
        /** Value projection {@code [kvHeads*headDim][dim]}. */
        V,
        /** Attention output {@code [dim][heads*headDim]}. */
        O,
        /** Feed-forward gate {@code [hidden][dim]}. */
        GATE,
        /** Feed-forward up {@code [hidden][dim]}. */
        UP,
        /** Feed-forward down {@code [dim][hidden]}. */
        DOWN
    }

    /** The RMS-norm weights of a layer. */
    enum Norm {
        /** Before attention, {@code [dim]}. */
        ATTENTION,
        /** Before the feed-forward layer, {@code [dim]}. */
        FFN,
        /** Over each query head ({@link ArchSpec#qkNorm()}), {@code [headDim]}. */
        Q_HEAD,
        /** Over each key head ({@link ArchSpec#qkNorm()}), {@code [headDim]}. */
        K_HEAD,
        /** Over the attention output before its residual add (Gemma's {@code post_attention_norm}), {@code [dim]}. */
        POST_ATTENTION,
        /** Over the feed-forward output before its residual add (Gemma's {@code post_ffw_norm}), {@code [dim]}. */
        POST_FFN
    }

    ModelConfig config();

    ArchSpec spec();

    /** The file the weights were read from. */
    Path path();

    /**
     * Names the exact weights, for the KV namespace: two models with different weights never
     * share an id. May read the whole file once.
     */
    String modelId();

    /** Token embedding {@code [vocab][dim]}. */
    Weight tokenEmbedding();

    /** Projection {@code m} of {@code layer}. */
    Weight matrix(Matrix m, int layer);

    /** Bias of projection {@code m} ({@code [out]} floats), or null when the model has none. */
    MemorySegment bias(Matrix m, int layer);

    /** Norm weight {@code n} of {@code layer}, or null when the model has none. */
    MemorySegment norm(Norm n, int layer);

    /** Final RMS-norm weight {@code [dim]}. */
    MemorySegment outputNorm();

    /** Classifier {@code [vocab][dim]}; the token embedding itself when tied. */
    Weight classifier();

    /** Frees the weights; every segment handed out becomes invalid. Closing again does nothing. */
    @Override
    void close();
}

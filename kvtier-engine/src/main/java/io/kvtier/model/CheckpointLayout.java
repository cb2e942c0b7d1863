package io.kvtier.model;

import java.util.ArrayList;
import java.util.List;

/**
 * Where each tensor of a llama2.c checkpoint lies in the file, computed from the header alone.
 * The one source of truth for the tensor order, shared by {@link Checkpoint} (reading and
 * validating) and {@link CheckpointWriter} (writing).
 *
 * <p>File layout (llama2.c {@code run.c}, {@code memory_map_weights}): a 28-byte header of seven
 * little-endian int32, then float32 tensors in the order of {@link #tensors()}, each matrix
 * row-major {@code [out][in]}, per-layer tensors stacked over layers.
 */
final class CheckpointLayout {

    /** Seven int32: dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len. */
    static final long HEADER_BYTES = 7 * Integer.BYTES;

    /**
     * One tensor (or one stack of per-layer tensors) of the file.
     *
     * @param name       llama2.c name, used in error messages
     * @param count      layers for a per-layer tensor, 1 otherwise
     * @param rows       rows of one instance ({@code out} of a matrix, 1 for a vector)
     * @param cols       columns of one instance ({@code in} of a matrix, length of a vector)
     * @param byteOffset offset of the first float from the start of the file
     */
    record Tensor(String name, int count, long rows, long cols, long byteOffset) {
        long floatsEach() {
            return rows * cols;
        }

        long bytes() {
            return count * floatsEach() * Float.BYTES;
        }

        long end() {
            return byteOffset + bytes();
        }

        /** Byte offset of instance {@code i} (a layer for per-layer tensors). */
        long offsetOf(int i) {
            return byteOffset + i * floatsEach() * Float.BYTES;
        }
    }

    private final List<Tensor> tensors;
    private final long fileBytes;

    private CheckpointLayout(List<Tensor> tensors) {
        this.tensors = List.copyOf(tensors);
        this.fileBytes = tensors.getLast().end();
    }

    static CheckpointLayout of(ModelConfig c) {
        long dim = c.dim();
        long qDim = (long) c.heads() * c.headDim();
        long kvDim = c.kvDim();
        int n = c.layers();
        List<Tensor> t = new ArrayList<>();
        long[] at = {HEADER_BYTES};
        java.util.function.Consumer<Tensor> add = x -> {
            t.add(x);
            at[0] = x.end();
        };
        add.accept(new Tensor("token_embedding_table", 1, c.vocabSize(), dim, at[0]));
        add.accept(new Tensor("rms_att_weight", n, 1, dim, at[0]));
        add.accept(new Tensor("wq", n, qDim, dim, at[0]));
        add.accept(new Tensor("wk", n, kvDim, dim, at[0]));
        add.accept(new Tensor("wv", n, kvDim, dim, at[0]));
        add.accept(new Tensor("wo", n, dim, qDim, at[0]));
        add.accept(new Tensor("rms_ffn_weight", n, 1, dim, at[0]));
        add.accept(new Tensor("w1", n, c.hiddenDim(), dim, at[0]));
        add.accept(new Tensor("w2", n, dim, c.hiddenDim(), at[0]));
        add.accept(new Tensor("w3", n, c.hiddenDim(), dim, at[0]));
        add.accept(new Tensor("rms_final_weight", 1, 1, dim, at[0]));
        // Legacy RoPE tables [seq_len][head_size/2], unused: run.c computes rotary on the fly.
        add.accept(new Tensor("freq_cis_real", 1, c.seqLen(), c.headDim() / 2, at[0]));
        add.accept(new Tensor("freq_cis_imag", 1, c.seqLen(), c.headDim() / 2, at[0]));
        if (!c.sharedClassifier()) {
            add.accept(new Tensor("wcls", 1, c.vocabSize(), dim, at[0]));
        }
        return new CheckpointLayout(t);
    }

    List<Tensor> tensors() {
        return tensors;
    }

    /** Exact size in bytes of a checkpoint with this header. */
    long fileBytes() {
        return fileBytes;
    }

    Tensor tensor(String name) {
        for (Tensor x : tensors) {
            if (x.name().equals(name)) {
                return x;
            }
        }
        throw new IllegalArgumentException("no tensor " + name);
    }

    /** The tensor whose bytes include {@code byteOffset}, or null past the end / in the header. */
    Tensor tensorAt(long byteOffset) {
        for (Tensor x : tensors) {
            if (byteOffset >= x.byteOffset() && byteOffset < x.end()) {
                return x;
            }
        }
        return null;
    }
}

package io.kvtier.model.tensor;

import io.kvtier.model.gguf.GgmlType;

/**
 * The weight encodings kvtier computes with, with ggml's type ids and block geometry. A row of
 * {@code n} values (n a multiple of {@link #blockValues()}) takes {@code n / blockValues() *
 * blockBytes()} bytes; blocks are little-endian and laid out as ggml's {@code block_*} structs
 * (see {@link ScalarDequant} for each layout).
 */
public enum TensorType {
    F32(GgmlType.F32),
    F16(GgmlType.F16),
    Q4_0(GgmlType.Q4_0),
    Q8_0(GgmlType.Q8_0),
    Q4_K(GgmlType.Q4_K),
    Q6_K(GgmlType.Q6_K),
    BF16(GgmlType.BF16);

    /** The ggml type this is: its id and block geometry. */
    private final GgmlType ggml;

    TensorType(GgmlType ggml) {
        this.ggml = ggml;
    }

    /** ggml's {@code enum ggml_type} value, as stored in a GGUF tensor info. */
    public int ggmlId() {
        return ggml.id;
    }

    /** Values per block (1 for the float types). */
    public int blockValues() {
        return ggml.blockSize;
    }

    /** Bytes per block. */
    public int blockBytes() {
        return ggml.bytesPerBlock;
    }

    /**
     * Bytes of a row of {@code values} values ({@link GgmlType#bytes}: the geometry has one source).
     *
     * @throws IllegalArgumentException when {@code values} is not a multiple of the block size
     */
    public long rowBytes(long values) {
        return ggml.bytes(values);
    }

    /** The type with ggml id {@code id}, or null when kvtier does not support it. */
    public static TensorType ofGgmlId(int id) {
        for (TensorType t : values()) {
            if (t.ggml.id == id) {
                return t;
            }
        }
        return null;
    }
}

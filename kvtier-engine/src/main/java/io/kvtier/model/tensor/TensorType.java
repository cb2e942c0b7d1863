package io.kvtier.model.tensor;

/**
 * The weight encodings kvtier computes with, with ggml's type ids and block geometry. A row of
 * {@code n} values (n a multiple of {@link #blockValues()}) takes {@code n / blockValues() *
 * blockBytes()} bytes; blocks are little-endian and laid out as ggml's {@code block_*} structs
 * (see {@link ScalarDequant} for each layout).
 */
public enum TensorType {
    F32(0, 1, 4),
    F16(1, 1, 2),
    Q4_0(2, 32, 18),
    Q8_0(8, 32, 34),
    Q4_K(12, 256, 144),
    Q6_K(14, 256, 210),
    BF16(30, 1, 2);

    private final int ggmlId;
    private final int blockValues;
    private final int blockBytes;

    TensorType(int ggmlId, int blockValues, int blockBytes) {
        this.ggmlId = ggmlId;
        this.blockValues = blockValues;
        this.blockBytes = blockBytes;
    }

    /** ggml's {@code enum ggml_type} value, as stored in a GGUF tensor info. */
    public int ggmlId() {
        return ggmlId;
    }

    /** Values per block (1 for the float types). */
    public int blockValues() {
        return blockValues;
    }

    /** Bytes per block. */
    public int blockBytes() {
        return blockBytes;
    }

    /**
     * Bytes of a row of {@code values} values.
     *
     * @throws IllegalArgumentException when {@code values} is not a multiple of the block size
     */
    public long rowBytes(long values) {
        if (values % blockValues != 0) {
            throw new IllegalArgumentException(this + " rows hold whole blocks of " + blockValues
                    + " values; a row of " + values + " does not");
        }
        return values / blockValues * blockBytes;
    }

    /** The type with ggml id {@code id}, or null when kvtier does not support it. */
    public static TensorType ofGgmlId(int id) {
        for (TensorType t : values()) {
            if (t.ggmlId == id) {
                return t;
            }
        }
        return null;
    }
}

package io.kvtier.model.gguf;

/**
 * The tensor types of ggml ({@code enum ggml_type} in ggml.h) as GGUF stores them, with the
 * block geometry needed to size a tensor: a row of {@code ne[0]} elements occupies
 * {@code ne[0] / blockSize * bytesPerBlock} bytes, and {@code ne[0]} must be a multiple of the
 * block size. Sizes are those of ggml's {@code block_*} structs (ggml-common.h). Which types the
 * engine can compute with is decided elsewhere; this enum only says how many bytes each holds.
 */
public enum GgmlType {
    F32(0, 1, 4),
    F16(1, 1, 2),
    Q4_0(2, 32, 18),
    Q4_1(3, 32, 20),
    Q5_0(6, 32, 22),
    Q5_1(7, 32, 24),
    Q8_0(8, 32, 34),
    Q8_1(9, 32, 36),
    Q2_K(10, 256, 84),
    Q3_K(11, 256, 110),
    Q4_K(12, 256, 144),
    Q5_K(13, 256, 176),
    Q6_K(14, 256, 210),
    Q8_K(15, 256, 292),
    IQ2_XXS(16, 256, 66),
    IQ2_XS(17, 256, 74),
    IQ3_XXS(18, 256, 98),
    IQ1_S(19, 256, 50),
    IQ4_NL(20, 32, 18),
    IQ3_S(21, 256, 110),
    IQ2_S(22, 256, 82),
    IQ4_XS(23, 256, 136),
    I8(24, 1, 1),
    I16(25, 1, 2),
    I32(26, 1, 4),
    I64(27, 1, 8),
    F64(28, 1, 8),
    IQ1_M(29, 256, 56),
    BF16(30, 1, 2),
    TQ1_0(34, 256, 54),
    TQ2_0(35, 256, 66),
    MXFP4(39, 32, 17);

    private static final GgmlType[] BY_ID = new GgmlType[64];

    static {
        for (GgmlType t : values()) {
            BY_ID[t.id] = t;
        }
    }

    /** The numeric id GGUF stores. */
    public final int id;
    /** Elements per block (1 for plain types). */
    public final int blockSize;
    /** Bytes per block. */
    public final int bytesPerBlock;

    GgmlType(int id, int blockSize, int bytesPerBlock) {
        this.id = id;
        this.blockSize = blockSize;
        this.bytesPerBlock = bytesPerBlock;
    }

    /** The type with this id, or null for ids ggml never defined or has removed (4, 5, 31-33, 36-38). */
    public static GgmlType byId(long id) {
        return id >= 0 && id < BY_ID.length ? BY_ID[(int) id] : null;
    }

    /**
     * Bytes of {@code elements} consecutive elements (a whole number of blocks).
     *
     * @throws IllegalArgumentException when {@code elements} is not a multiple of the block size
     * @throws ArithmeticException on overflow
     */
    public long bytes(long elements) {
        if (elements % blockSize != 0) {
            throw new IllegalArgumentException(elements + " elements is not a whole number of " + name()
                    + " blocks of " + blockSize);
        }
        return Math.multiplyExact(elements / blockSize, (long) bytesPerBlock);
    }
}

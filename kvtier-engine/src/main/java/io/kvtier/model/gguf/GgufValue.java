package io.kvtier.model.gguf;

/**
 * One metadata value as stored. {@code value} is, by {@code type}: integers of any width a
 * {@link Long} (UINT64 values above {@link Long#MAX_VALUE} keep their bits), FLOAT32 a
 * {@link Float}, FLOAT64 a {@link Double}, BOOL a {@link Boolean}, STRING a {@link String}; an
 * ARRAY's value is a {@code long[]} (integer elements), {@code float[]}, {@code double[]},
 * {@code boolean[]}, {@code String[]} or {@code GgufValue[]} (nested arrays), with
 * {@code elementType} its element type (null for scalars).
 */
public record GgufValue(GgufValueType type, GgufValueType elementType, Object value) {

    /** Number of elements of an array value (1 for a scalar). */
    public int length() {
        return switch (value) {
            case long[] a -> a.length;
            case float[] a -> a.length;
            case double[] a -> a.length;
            case boolean[] a -> a.length;
            case String[] a -> a.length;
            case GgufValue[] a -> a.length;
            default -> 1;
        };
    }

    /** "UINT32", or "ARRAY of STRING". */
    public String typeName() {
        return type == GgufValueType.ARRAY ? "ARRAY of " + elementType : type.name();
    }
}

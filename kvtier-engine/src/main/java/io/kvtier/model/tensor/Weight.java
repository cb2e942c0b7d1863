package io.kvtier.model.tensor;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * A weight matrix {@code [rows][cols]} in its file encoding: row {@code r} is the
 * {@code type.rowBytes(cols)} bytes at {@code r * rowBytes()} of {@code data} (a slice of the
 * model file's bytes; never copied again).
 *
 * @param type encoding of every row
 * @param data the matrix bytes, exactly {@code rows * rowBytes()} long
 * @param rows output dimension (ggml {@code ne[1]})
 * @param cols input dimension (ggml {@code ne[0]}), a multiple of the type's block size
 * @throws IllegalArgumentException when the sizes disagree
 */
public record Weight(TensorType type, MemorySegment data, int rows, int cols) {

    public Weight {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(data, "data");
        if (rows <= 0 || cols <= 0) {
            throw new IllegalArgumentException("weight of " + rows + " x " + cols);
        }
        long expected = type.rowBytes(cols) * rows;
        if (data.byteSize() != expected) {
            throw new IllegalArgumentException(type + " weight [" + rows + "][" + cols + "] needs " + expected
                    + " bytes, got " + data.byteSize());
        }
    }

    /** Bytes of one row. */
    public long rowBytes() {
        return type.rowBytes(cols);
    }

    /** Byte offset of row {@code r} in {@link #data()}. */
    public long rowOffset(int r) {
        return r * rowBytes();
    }
}

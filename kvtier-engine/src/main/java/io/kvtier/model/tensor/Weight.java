package io.kvtier.model.tensor;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * A weight matrix {@code [rows][cols]} in its file encoding: row {@code r} is the
 * {@code type.rowBytes(cols)} bytes at {@code r * rowBytes()} of {@code data} (a slice of the
 * model file's bytes; never copied again), unless {@code interleaved}: then {@code data} (the
 * same bytes, the same size) holds a Q4_0 or Q8_0 matrix repacked in place by {@link Interleaved}, whose
 * rows are read only through {@link QuantMatmul}.
 *
 * @param type encoding of every row
 * @param data the matrix bytes, exactly {@code rows * rowBytes()} long
 * @param rows output dimension (ggml {@code ne[1]})
 * @param cols input dimension (ggml {@code ne[0]}), a multiple of the type's block size
 * @param interleaved whether {@code data} is in {@link Interleaved}'s layout (Q4_0 and Q8_0 only)
 * @throws IllegalArgumentException when the sizes disagree, or an interleaved weight is not a
 *         Q4_0 or Q8_0 matrix {@link Interleaved#fits} accepts
 */
public record Weight(TensorType type, MemorySegment data, int rows, int cols, boolean interleaved) {

    /** A weight in its file's row-major encoding. */
    public Weight(TensorType type, MemorySegment data, int rows, int cols) {
        this(type, data, rows, cols, false);
    }

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
        if (interleaved && (!Interleaved.supports(type) || !Interleaved.fits(rows, cols))) {
            throw new IllegalArgumentException("cannot interleave a " + type + " weight [" + rows + "][" + cols + "]");
        }
    }

    /**
     * Rows that a thread split should keep together: {@link Interleaved#GROUP} for an
     * interleaved weight (a cut group is computed whole for each side), else 1.
     */
    public int rowGroup() {
        return interleaved ? Interleaved.GROUP : 1;
    }

    /** Bytes of one row. */
    public long rowBytes() {
        return type.rowBytes(cols);
    }

    /**
     * Byte offset of row {@code r} in {@link #data()}.
     *
     * @throws IllegalStateException for an interleaved weight, whose rows are not contiguous
     */
    public long rowOffset(int r) {
        if (interleaved) {
            throw new IllegalStateException("an interleaved weight has no row offsets");
        }
        return r * rowBytes();
    }
}

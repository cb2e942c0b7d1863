package io.kvtier.model.gguf;

/**
 * One tensor's description from the GGUF header. {@code dims} are ggml's {@code ne}: dims[0] is
 * the innermost (contiguous) dimension, so a matrix with {@code out} rows of {@code in}
 * elements has dims {@code [in, out]}. {@code offset} is relative to the start of the data
 * section; {@code byteSize} is the exact byte count of the data (without alignment padding).
 */
public record GgufTensor(String name, GgmlType type, long[] dims, long offset, long byteSize) {

    /** The product of the dims. */
    public long elements() {
        long n = 1;
        for (long d : dims) {
            n *= d;
        }
        return n;
    }

    /** dims[i], or 1 beyond the stored dims (ggml's convention). */
    public long dim(int i) {
        return i < dims.length ? dims[i] : 1;
    }

    /** Bytes of one row of dims[0] elements. */
    public long rowBytes() {
        return type.bytes(dim(0));
    }

    @Override
    public long[] dims() {
        return dims.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof GgufTensor t && name.equals(t.name) && type == t.type
                && java.util.Arrays.equals(dims, t.dims) && offset == t.offset && byteSize == t.byteSize;
    }

    @Override
    public int hashCode() {
        return name.hashCode() * 31 + Long.hashCode(offset);
    }

    @Override
    public String toString() {
        return name + " " + type + " " + java.util.Arrays.toString(dims) + " @" + offset + " (" + byteSize + " bytes)";
    }
}

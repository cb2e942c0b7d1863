package io.kvtier.model.gguf;

import io.kvtier.model.ModelFormatException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * A bounds-checked little-endian cursor over a GGUF file's bytes. Every read past the end
 * throws {@link ModelFormatException} naming the file, the byte offset and what was being read
 * ({@link #what}), so a truncated file says where it ends.
 */
final class GgufReader {

    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfDouble F64 = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final String file;
    private final MemorySegment seg;
    private final long size;
    private long pos;
    /** What is being read, for error messages ("metadata key tokenizer.ggml.tokens"). */
    String what = "header";

    GgufReader(String file, MemorySegment seg) {
        this.file = file;
        this.seg = seg;
        this.size = seg.byteSize();
    }

    long position() {
        return pos;
    }

    long remaining() {
        return size - pos;
    }

    ModelFormatException error(String problem) {
        return new ModelFormatException(file + ": " + problem);
    }

    private long take(long n) {
        if (n < 0 || n > size - pos) {
            throw error("truncated: the file ends at byte " + size + " inside the " + what);
        }
        long at = pos;
        pos += n;
        return at;
    }

    int u8() {
        return seg.get(ValueLayout.JAVA_BYTE, take(1)) & 0xFF;
    }

    int i8() {
        return seg.get(ValueLayout.JAVA_BYTE, take(1));
    }

    int u16() {
        return seg.get(I16, take(2)) & 0xFFFF;
    }

    int i16() {
        return seg.get(I16, take(2));
    }

    long u32() {
        return seg.get(I32, take(4)) & 0xFFFF_FFFFL;
    }

    int i32() {
        return seg.get(I32, take(4));
    }

    long i64() {
        return seg.get(I64, take(8));
    }

    float f32() {
        return seg.get(F32, take(4));
    }

    double f64() {
        return seg.get(F64, take(8));
    }

    /** A u64 count that must fit the rest of the file at {@code minBytes} bytes each. */
    int count(String of, int minBytes) {
        long n = i64();
        if (n < 0 || n > remaining() / Math.max(1, minBytes) || n > Integer.MAX_VALUE - 8) {
            throw error(of + " count " + Long.toUnsignedString(n) + " cannot fit in the "
                    + remaining() + " bytes left in the file (truncated or corrupt " + what + ")");
        }
        return (int) n;
    }

    /** A GGUF string: u64 byte length, then UTF-8 bytes (invalid sequences become U+FFFD). */
    String string() {
        long n = i64();
        if (n < 0 || n > remaining()) {
            throw error("truncated: a string of " + Long.toUnsignedString(n) + " bytes in the " + what
                    + " does not fit in the " + remaining() + " bytes left");
        }
        byte[] b = new byte[(int) n];
        MemorySegment.copy(seg, ValueLayout.JAVA_BYTE, take(n), b, 0, (int) n);
        return new String(b, StandardCharsets.UTF_8);
    }
}

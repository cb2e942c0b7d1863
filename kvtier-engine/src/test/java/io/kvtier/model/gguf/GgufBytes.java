package io.kvtier.model.gguf;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Writes GGUF bytes for tests, valid or deliberately not: every field (magic, version, type ids,
 * offsets) can be set to any value. {@link #tensor} lays tensors out contiguously at the
 * alignment unless an explicit offset is given.
 */
public final class GgufBytes {

    private int magic = 0x46554747;
    private int version = 3;
    private final List<Consumer<Out>> kvs = new ArrayList<>();
    private final List<Consumer<Out>> infos = new ArrayList<>();
    private long alignment = GgufFile.DEFAULT_ALIGNMENT;
    private long nextOffset;
    private long dataBytes;

    /** Little-endian output. */
    public static final class Out {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();

        Out u8(int v) {
            bytes.write(v);
            return this;
        }

        Out u32(long v) {
            bytes.writeBytes(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt((int) v).array());
            return this;
        }

        Out u64(long v) {
            bytes.writeBytes(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v).array());
            return this;
        }

        Out f32(float v) {
            return u32(Float.floatToRawIntBits(v));
        }

        Out str(String s) {
            byte[] b = s.getBytes(StandardCharsets.UTF_8);
            u64(b.length);
            bytes.writeBytes(b);
            return this;
        }
    }

    public GgufBytes magic(int m) {
        magic = m;
        return this;
    }

    public GgufBytes version(int v) {
        version = v;
        return this;
    }

    /** A metadata entry with a raw type id and a value writer. */
    public GgufBytes kv(String key, int typeId, Consumer<Out> value) {
        kvs.add(o -> value.accept(o.str(key).u32(typeId)));
        return this;
    }

    public GgufBytes string(String key, String value) {
        return kv(key, 8, o -> o.str(value));
    }

    public GgufBytes u32(String key, long value) {
        if (key.equals("general.alignment")) {
            alignment = value;
        }
        return kv(key, 4, o -> o.u32(value));
    }

    public GgufBytes f32(String key, float value) {
        return kv(key, 6, o -> o.f32(value));
    }

    public GgufBytes bool(String key, boolean value) {
        return kv(key, 7, o -> o.u8(value ? 1 : 0));
    }

    public GgufBytes strings(String key, String... values) {
        return kv(key, 9, o -> {
            o.u32(8).u64(values.length);
            for (String v : values) o.str(v);
        });
    }

    public GgufBytes floats(String key, float... values) {
        return kv(key, 9, o -> {
            o.u32(6).u64(values.length);
            for (float v : values) o.f32(v);
        });
    }

    public GgufBytes ints(String key, int... values) {
        return kv(key, 9, o -> {
            o.u32(5).u64(values.length);
            for (int v : values) o.u32(v);
        });
    }

    /** A tensor placed after the previous one (padded to the alignment). */
    public GgufBytes tensor(String name, GgmlType type, long... dims) {
        long offset = nextOffset;
        return tensorAt(name, type.id, offset, type.bytes(product(dims)), dims);
    }

    /** A tensor with any type id and offset; {@code bytes} is the data it claims (for layout only). */
    public GgufBytes tensorAt(String name, int typeId, long offset, long bytes, long... dims) {
        infos.add(o -> {
            o.str(name).u32(dims.length);
            for (long d : dims) o.u64(d);
            o.u32(typeId).u64(offset);
        });
        long end = offset + Math.max(0, bytes);
        nextOffset = Math.max(nextOffset, (end + alignment - 1) / alignment * alignment);
        dataBytes = Math.max(dataBytes, end);
        return this;
    }

    /** Size of the data section written after the padding (defaults to the end of the last tensor). */
    public GgufBytes dataBytes(long n) {
        dataBytes = n;
        return this;
    }

    public byte[] bytes() {
        Out o = new Out();
        o.u32(magic).u32(version).u64(infos.size()).u64(kvs.size());
        kvs.forEach(k -> k.accept(o));
        infos.forEach(t -> t.accept(o));
        if (!infos.isEmpty()) {
            long pad = (alignment - o.bytes.size() % alignment) % alignment;
            for (long i = 0; i < pad; i++) o.u8(0);
            for (long i = 0; i < dataBytes; i++) o.u8((int) (i * 7 + 3));
        }
        return o.bytes.toByteArray();
    }

    public Path write(Path dir, String name) {
        try {
            return Files.write(dir.resolve(name), bytes());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static long product(long[] dims) {
        long n = 1;
        for (long d : dims) n *= d;
        return n;
    }
}

package io.kvtier.model.gguf;

import io.kvtier.model.OffHeapFiles;
import io.kvtier.model.ModelFormatException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A GGUF file (versions 2 and 3, little-endian), read whole into off-heap memory ({@link OffHeapFiles}: not
 * mapped, so a file truncated or rewritten under a run cannot crash or change it): the header (magic,
 * version, counts), the metadata, the tensor infos and the data section. Tensor data stays in
 * that memory (no heap copy); {@link #data(GgufTensor)} returns a slice of it. The memory
 * belongs to one shared {@link Arena} owned by this object: after {@link #close()} every segment
 * it handed out is invalid.
 *
 * <p>Layout (ggml's docs/gguf.md): {@code "GGUF"}, u32 version, u64 tensor count, u64 metadata
 * count, the key-value pairs, the tensor infos (name, u32 n_dims, u64 ne[n_dims], u32 type, u64
 * offset), padding to {@code general.alignment} (32 when absent), the data section. Tensor
 * offsets are relative to the data section and must be multiples of the alignment.
 *
 * <p>Everything is validated when opened; any inconsistency throws {@link ModelFormatException}
 * with one line naming the file and the problem: missing file, truncation (at any point of the
 * header or a tensor past the end), bad magic or version, unknown value or tensor type, more
 * than 4 dims, a row not a whole number of blocks, duplicate keys or tensor names, a bad
 * {@code general.alignment}, a misaligned tensor, tensors that overlap. A file with no tensors
 * (a vocab-only file) may end right after its header, before the padded data offset.
 *
 * <p>Thread safety: immutable after {@link #open} (but for the in-place repacking of Q4_0 tensors
 * that {@link GgufModel} does while it loads, before any reader sees them); readers may share it. {@link #close()} must not
 * race with readers.
 */
public final class GgufFile implements AutoCloseable {

    /** "GGUF" read as a little-endian u32. */
    private static final int MAGIC = 0x46554747;
    /** GGML_MAX_DIMS. */
    private static final int MAX_DIMS = 4;
    public static final int DEFAULT_ALIGNMENT = 32;

    private final Path path;
    private final Arena arena;
    private final MemorySegment file;
    /** The same bytes, writable: only {@link GgufModel} repacks tensors in them ({@link #repackable}). */
    private final MemorySegment writable;
    private final int version;
    private final GgufMetadata metadata;
    private final List<GgufTensor> tensors;
    private final Map<String, GgufTensor> byName;
    private final long alignment;
    private final long dataOffset;

    private GgufFile(Path path, Arena arena, MemorySegment file, MemorySegment writable, int version,
                     GgufMetadata metadata, List<GgufTensor> tensors, long alignment, long dataOffset) {
        this.path = path;
        this.arena = arena;
        this.file = file;
        this.writable = writable;
        this.version = version;
        this.metadata = metadata;
        this.tensors = Collections.unmodifiableList(tensors);
        this.byName = new HashMap<>();
        for (GgufTensor t : tensors) {
            byName.put(t.name(), t);
        }
        this.alignment = alignment;
        this.dataOffset = dataOffset;
    }

    /**
     * True when the file starts with the GGUF magic (for telling formats apart by content).
     * False for a missing, unreadable or shorter file.
     */
    public static boolean isGguf(Path path) {
        byte[] b = OffHeapFiles.firstBytes(path, 4);
        return b != null && b.length == 4 && b[0] == 'G' && b[1] == 'G' && b[2] == 'U' && b[3] == 'F';
    }

    /**
     * The first four bytes as text when they look like a damaged GGUF magic (three of the four
     * bytes of {@code GGUF} in place, or the file's name ends in {@code .gguf}), else null; for
     * an error message only, never to choose the format.
     */
    public static String damagedMagic(Path path) {
        byte[] b = OffHeapFiles.firstBytes(path, 4);
        if (b == null) {
            return null;
        }
        byte[] magic = {'G', 'G', 'U', 'F'};
        int same = 0;
        for (int i = 0; i < b.length; i++) {
            same += b[i] == magic[i] ? 1 : 0;
        }
        boolean named = path.getFileName() != null && path.getFileName().toString().toLowerCase(java.util.Locale.ROOT).endsWith(".gguf");
        if (b.length < 4 || (same < 3 && !named)) {
            return null;
        }
        StringBuilder text = new StringBuilder();
        for (byte x : b) {
            text.append(x >= 0x20 && x < 0x7f ? String.valueOf((char) x) : String.format("\\x%02x", x & 0xff));
        }
        return text.toString();
    }

    /**
     * Maps and validates a GGUF file.
     *
     * @throws ModelFormatException on any problem listed in the class comment
     */
    public static GgufFile open(Path path) {
        String name = "GGUF file " + path;
        // Magic and version before the whole file is read: "GGUF" and 1.5 GB of zeros took 7 s and 1.8 GB to be refused.
        OffHeapFiles.HeadCheck version = (head, size) -> checkMagicAndVersion(new GgufReader(name, head));
        return OffHeapFiles.read(path, name, "a GGUF file", 8, version, (arena, seg) -> parse(path, name, arena, seg));
    }

    /** Reads and checks the magic and the version. */
    private static long checkMagicAndVersion(GgufReader in) {
        int magic = in.i32();
        if (magic != MAGIC) {
            throw in.error(String.format("bad magic 0x%08x, expected \"GGUF\"; not a GGUF file", magic));
        }
        in.what = "header";
        long version = in.u32();
        if (version != 2 && version != 3) {
            throw in.error("unsupported GGUF version " + version + " (kvtier reads versions 2 and 3)");
        }
        return version;
    }

    /**
     * The metadata of a GGUF file from its first {@code maxBytes} bytes only, read into the heap (not
     * mapped): what a command must know before it loads a model of many GB (its KV groups).
     *
     * @return the metadata, or null when the file is not GGUF, cannot be read, is malformed, or its
     *         metadata is longer than {@code maxBytes} (the full load then says what is wrong)
     */
    public static GgufMetadata readHeader(Path path, int maxBytes) {
        byte[] head = OffHeapFiles.firstBytes(path, maxBytes);
        if (head == null) {
            return null;
        }
        try {
            String name = "GGUF file " + path;
            return parseHeader(new GgufReader(name, MemorySegment.ofArray(head)), name, head.length).metadata();
        } catch (RuntimeException e) {
            return null;
        }
    }

    /** Parses {@code writable} (the file's bytes), handing out only read-only views of it but {@link #repackable}. */
    private static GgufFile parse(Path path, String name, Arena arena, MemorySegment writable) {
        MemorySegment seg = writable.asReadOnly();
        GgufReader in = new GgufReader(name, seg);
        Header header = parseHeader(in, name, seg.byteSize());
        GgufMetadata metadata = header.metadata();
        long tensorCount = header.tensorCount();
        in.what = "tensor infos";
        if (tensorCount < 0 || tensorCount > in.remaining() / 32) {
            throw in.error("tensor count " + Long.toUnsignedString(tensorCount) + " cannot fit in the "
                    + in.remaining() + " bytes left (truncated or corrupt header)");
        }
        long alignment = alignment(in, metadata);

        List<GgufTensor> tensors = new ArrayList<>((int) tensorCount);
        Map<String, GgufTensor> seen = new HashMap<>();
        for (long i = 0; i < tensorCount; i++) {
            GgufTensor t = readTensorInfo(in, i, alignment);
            if (seen.put(t.name(), t) != null) {
                throw in.error("duplicate tensor name " + t.name());
            }
            tensors.add(t);
        }
        long dataOffset = pad(in.position(), alignment);
        checkData(in, tensors, dataOffset, seg.byteSize());
        return new GgufFile(path, arena, seg, writable, (int) header.version(), metadata, tensors, alignment, dataOffset);
    }

    /** A file's header up to the end of its metadata. */
    private record Header(long version, long tensorCount, GgufMetadata metadata) {
    }

    /** Reads the magic, version, counts and key-value pairs. */
    private static Header parseHeader(GgufReader in, String name, long size) {
        if (size < 4) {
            throw in.error("truncated: " + size + " bytes, shorter than the GGUF magic");
        }
        long version = checkMagicAndVersion(in);
        long tensorCount = in.i64();
        long kvCount = in.i64();
        // Each KV pair takes at least 8 (key length) + 4 (type) + 1 bytes; each tensor info 8 + 4 + 8 + 4 + 8.
        if (kvCount < 0 || kvCount > in.remaining() / 13) {
            throw in.error("metadata count " + Long.toUnsignedString(kvCount) + " cannot fit in the "
                    + in.remaining() + " bytes left (truncated or corrupt header)");
        }
        LinkedHashMap<String, GgufValue> kv = new LinkedHashMap<>();
        for (long i = 0; i < kvCount; i++) {
            in.what = "key of metadata entry " + i;
            String key = in.string();
            in.what = "metadata key " + key;
            GgufValue v = readValue(in, in.i32());
            if (kv.putIfAbsent(key, v) != null) {
                throw in.error("duplicate metadata key " + key);
            }
        }
        return new Header(version, tensorCount, new GgufMetadata(name, kv));
    }

    private static long alignment(GgufReader in, GgufMetadata metadata) {
        GgufValue a = metadata.get("general.alignment");
        if (a == null) {
            return DEFAULT_ALIGNMENT;
        }
        if (a.type() != GgufValueType.UINT32) {
            throw in.error("metadata key general.alignment is " + a.typeName() + ", expected UINT32");
        }
        long v = (Long) a.value();
        if (v == 0 || (v & (v - 1)) != 0) {
            throw in.error("general.alignment " + v + " is not a power of two");
        }
        return v;
    }

    private static GgufValue readValue(GgufReader in, int typeId) {
        GgufValueType type = GgufValueType.byId(typeId);
        if (type == null) {
            throw in.error("unknown metadata value type " + typeId + " in the " + in.what);
        }
        return switch (type) {
            case ARRAY -> readArray(in);
            case STRING -> new GgufValue(type, null, in.string());
            case FLOAT32 -> new GgufValue(type, null, in.f32());
            case FLOAT64 -> new GgufValue(type, null, in.f64());
            case BOOL -> new GgufValue(type, null, readBool(in));
            default -> new GgufValue(type, null, readInteger(in, type));
        };
    }

    private static boolean readBool(GgufReader in) {
        int b = in.u8();
        if (b > 1) {
            throw in.error("BOOL value " + b + " (not 0 or 1) in the " + in.what);
        }
        return b == 1;
    }

    private static long readInteger(GgufReader in, GgufValueType type) {
        return switch (type) {
            case UINT8 -> in.u8();
            case INT8 -> in.i8();
            case UINT16 -> in.u16();
            case INT16 -> in.i16();
            case UINT32 -> in.u32();
            case INT32 -> in.i32();
            case UINT64, INT64 -> in.i64();
            default -> throw new IllegalArgumentException(type.name());
        };
    }

    private static GgufValue readArray(GgufReader in) {
        int elemId = in.i32();
        GgufValueType elem = GgufValueType.byId(elemId);
        if (elem == null) {
            throw in.error("unknown array element type " + elemId + " in the " + in.what);
        }
        int n = in.count("array element", elem.minBytes);
        Object values = switch (elem) {
            case STRING -> {
                String[] a = new String[n];
                for (int i = 0; i < n; i++) a[i] = in.string();
                yield a;
            }
            case FLOAT32 -> {
                float[] a = new float[n];
                for (int i = 0; i < n; i++) a[i] = in.f32();
                yield a;
            }
            case FLOAT64 -> {
                double[] a = new double[n];
                for (int i = 0; i < n; i++) a[i] = in.f64();
                yield a;
            }
            case BOOL -> {
                boolean[] a = new boolean[n];
                for (int i = 0; i < n; i++) a[i] = readBool(in);
                yield a;
            }
            case ARRAY -> {
                GgufValue[] a = new GgufValue[n];
                for (int i = 0; i < n; i++) a[i] = readArray(in);
                yield a;
            }
            default -> {
                long[] a = new long[n];
                for (int i = 0; i < n; i++) a[i] = readInteger(in, elem);
                yield a;
            }
        };
        return new GgufValue(GgufValueType.ARRAY, elem, values);
    }

    private static GgufTensor readTensorInfo(GgufReader in, long index, long alignment) {
        in.what = "info of tensor " + index;
        String name = in.string();
        in.what = "info of tensor " + name;
        long nDims = in.u32();
        if (nDims < 1 || nDims > MAX_DIMS) {
            throw in.error("tensor " + name + " has " + nDims + " dims, expected 1.." + MAX_DIMS);
        }
        long[] dims = new long[(int) nDims];
        long elements = 1;
        for (int d = 0; d < nDims; d++) {
            dims[d] = in.i64();
            if (dims[d] < 0) {
                throw in.error("tensor " + name + " has dimension " + d + " = " + Long.toUnsignedString(dims[d]));
            }
            try {
                elements = Math.multiplyExact(elements, dims[d]);
            } catch (ArithmeticException e) {
                throw in.error("tensor " + name + " has too many elements (dims overflow 64 bits)");
            }
        }
        long typeId = in.u32();
        GgmlType type = GgmlType.byId(typeId);
        if (type == null) {
            throw in.error("tensor " + name + " has unknown tensor type " + typeId);
        }
        if (dims[0] % type.blockSize != 0) {
            throw in.error("tensor " + name + " has rows of " + dims[0] + " elements, not a whole number of "
                    + type + " blocks of " + type.blockSize);
        }
        long offset = in.i64();
        long bytes;
        try {
            bytes = type.bytes(elements);
        } catch (ArithmeticException e) {
            throw in.error("tensor " + name + " is too large (byte size overflows 64 bits)");
        }
        if (offset < 0 || offset % alignment != 0) {
            throw in.error("tensor " + name + " has offset " + Long.toUnsignedString(offset)
                    + ", not a multiple of the alignment " + alignment);
        }
        return new GgufTensor(name, type, dims, offset, bytes);
    }

    private static void checkData(GgufReader in, List<GgufTensor> tensors, long dataOffset, long fileSize) {
        if (tensors.isEmpty()) {
            return;
        }
        long dataBytes = fileSize - dataOffset;
        if (dataBytes < 0) {
            throw in.error("truncated: the data section would start at byte " + dataOffset + " but the file has "
                    + fileSize + " bytes");
        }
        List<GgufTensor> sorted = new ArrayList<>(tensors);
        sorted.sort(Comparator.comparingLong(GgufTensor::offset));
        GgufTensor prev = null;
        for (GgufTensor t : sorted) {
            if (t.offset() > dataBytes || t.byteSize() > dataBytes - t.offset()) {
                throw in.error("truncated or corrupt: tensor " + t.name() + " (" + t.type() + " "
                        + java.util.Arrays.toString(t.dims()) + ", " + t.byteSize() + " bytes at data offset "
                        + t.offset() + ") ends past the end of the file (data section of " + dataBytes + " bytes)");
            }
            if (prev != null && t.offset() < prev.offset() + prev.byteSize()) {
                throw in.error("tensors " + prev.name() + " and " + t.name() + " overlap (data offsets "
                        + prev.offset() + "+" + prev.byteSize() + " and " + t.offset() + ")");
            }
            prev = t;
        }
    }

    private static long pad(long x, long alignment) {
        return (x + alignment - 1) / alignment * alignment;
    }

    public Path path() {
        return path;
    }

    /** The format version (2 or 3). */
    public int version() {
        return version;
    }

    public GgufMetadata metadata() {
        return metadata;
    }

    /** The tensors in file order. */
    public List<GgufTensor> tensors() {
        return tensors;
    }

    /** The tensor named {@code name}, or null. */
    public GgufTensor findTensor(String name) {
        return byName.get(name);
    }

    /**
     * The tensor named {@code name}.
     *
     * @throws ModelFormatException naming the file and the tensor when there is none
     */
    public GgufTensor tensor(String name) {
        GgufTensor t = byName.get(name);
        if (t == null) {
            throw new ModelFormatException("GGUF file " + path + ": missing required tensor " + name);
        }
        return t;
    }

    /** {@code general.alignment}, or 32. */
    public long alignment() {
        return alignment;
    }

    /** Absolute file offset of the data section (the header end padded to the alignment). */
    public long dataOffset() {
        return dataOffset;
    }

    /** The whole file's bytes. */
    public MemorySegment segment() {
        return file;
    }

    /** The bytes of {@code t}'s data, exactly {@code t.byteSize()} long (a slice of the file's bytes). */
    public MemorySegment data(GgufTensor t) {
        return file.asSlice(dataOffset + t.offset(), t.byteSize());
    }

    /**
     * The bytes of {@code t}'s data, writable: for {@link GgufModel} to repack a tensor in place
     * (after which {@link #data} and {@link #segment} no longer show the file's bytes there).
     */
    MemorySegment repackable(GgufTensor t) {
        return writable.asSlice(dataOffset + t.offset(), t.byteSize());
    }

    /** Unmaps the file; every segment handed out becomes invalid. Closing again does nothing. */
    @Override
    public synchronized void close() {
        if (arena.scope().isAlive()) {
            arena.close();
        }
    }
}

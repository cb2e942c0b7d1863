package io.kvtier.tier;

import io.kvtier.kv.BlockKey;
import io.kvtier.kv.Namespace;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;
import java.util.zip.CRC32C;

/**
 * The header stored in front of every chunk in an offload tier, so that every read can be
 * verified (ARCHITECTURE §3.4). Byte layout, little-endian unless said otherwise:
 *
 * <pre>
 * offset  size  field
 *      0     4  magic, the ASCII bytes "KVTC"
 *      4     4  format version (int32), {@link Namespace#FORMAT_VERSION}
 *      8    32  namespace digest (the key's 32 digest bytes, in digest order)
 *     40    32  chunk key (digest order): key of the chunk's last block
 *     72    32  parent key (digest order): key before the chunk's first block
 *    104     4  token count n (int32), tokens of all blocks of the chunk
 *    108     4  CRC32C of the payload (int32)
 *    112     8  payload length in bytes (int64)
 *    120     4  CRC32C of header bytes [0, 120) followed by bytes [124, 128 + 4n)
 *    124     4  reserved, zero
 *    128    4n  token ids (int32 each)
 * </pre>
 *
 * The payload (the chunk's device blocks, concatenated) is stored elsewhere in the slot; its
 * length and checksum are recorded here. Checksums are CRC32C (Castagnoli, {@link CRC32C}).
 *
 * @param formatVersion chunk format version
 * @param namespace     digest of the engine namespace that wrote the chunk
 * @param key           chunk key
 * @param parent        key before the chunk
 * @param tokens        token ids of the chunk, in position order
 * @param payloadLength payload bytes
 * @param payloadCrc    CRC32C of the payload bytes
 */
public record ChunkHeader(int formatVersion, BlockKey namespace, BlockKey key, BlockKey parent, int[] tokens,
                          long payloadLength, int payloadCrc) {

    /** The magic bytes "KVTC" read as a little-endian int32. */
    public static final int MAGIC = 'K' | 'V' << 8 | 'T' << 16 | 'C' << 24;
    /** Bytes before the token ids. */
    public static final int FIXED_BYTES = 128;

    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong DIGEST_WORD = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final int OFF_VERSION = 4;
    private static final int OFF_NAMESPACE = 8;
    private static final int OFF_KEY = 40;
    private static final int OFF_PARENT = 72;
    private static final int OFF_TOKENS_COUNT = 104;
    private static final int OFF_PAYLOAD_CRC = 108;
    private static final int OFF_PAYLOAD_LENGTH = 112;
    private static final int OFF_HEADER_CRC = 120;
    private static final int OFF_RESERVED = 124;

    public ChunkHeader {
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(parent, "parent");
        tokens = tokens.clone();
        if (payloadLength < 0) {
            throw new IllegalArgumentException("payload length must not be negative: " + payloadLength);
        }
    }

    /** A header of the current {@link Namespace#FORMAT_VERSION}. */
    public static ChunkHeader of(BlockKey namespace, BlockKey key, BlockKey parent, int[] tokens, long payloadLength,
                                 int payloadCrc) {
        return new ChunkHeader(Namespace.FORMAT_VERSION, namespace, key, parent, tokens, payloadLength, payloadCrc);
    }

    /** Token ids (a copy). */
    @Override
    public int[] tokens() {
        return tokens.clone();
    }

    /** Encoded bytes of a header with {@code tokens} token ids. */
    public static long encodedSize(int tokens) {
        if (tokens < 0) {
            throw new IllegalArgumentException("token count must not be negative: " + tokens);
        }
        return FIXED_BYTES + 4L * tokens;
    }

    /** Encoded bytes of this header. */
    public long encodedSize() {
        return encodedSize(tokens.length);
    }

    /**
     * Writes this header at {@code offset} of {@code at}.
     *
     * @throws IndexOutOfBoundsException if the header does not fit
     */
    public void writeTo(MemorySegment at, long offset) {
        write(at, offset, formatVersion, namespace, key, parent, tokens, payloadLength, payloadCrc);
    }

    private static void write(MemorySegment at, long offset, int version, BlockKey namespace, BlockKey key, BlockKey parent,
                      int[] tokens, long payloadLength, int payloadCrc) {
        MemorySegment h = at.asSlice(offset, encodedSize(tokens.length));
        h.set(INT, 0, MAGIC);
        h.set(INT, OFF_VERSION, version);
        putKey(h, OFF_NAMESPACE, namespace);
        putKey(h, OFF_KEY, key);
        putKey(h, OFF_PARENT, parent);
        h.set(INT, OFF_TOKENS_COUNT, tokens.length);
        h.set(INT, OFF_PAYLOAD_CRC, payloadCrc);
        h.set(LONG, OFF_PAYLOAD_LENGTH, payloadLength);
        h.set(INT, OFF_RESERVED, 0);
        MemorySegment.copy(tokens, 0, h, INT, FIXED_BYTES, tokens.length);
        h.set(INT, OFF_HEADER_CRC, headerCrc(h, tokens.length));
    }

    private static int headerCrc(MemorySegment h, int tokenCount) {
        CRC32C crc = new CRC32C();
        crc.update(h.asSlice(0, OFF_HEADER_CRC).asByteBuffer());
        crc.update(h.asSlice(OFF_RESERVED, FIXED_BYTES - OFF_RESERVED + 4L * tokenCount).asByteBuffer());
        return (int) crc.getValue();
    }

    /** CRC32C of a segment's bytes, read in place (no heap copy for native segments). */
    public static int crc32c(MemorySegment bytes) {
        CRC32C crc = new CRC32C();
        updateCrc(crc, bytes);
        return (int) crc.getValue();
    }

    /**
     * Largest slice of a segment wrapped as one ByteBuffer: 1 GiB ({@code asByteBuffer} refuses
     * {@code Integer.MAX_VALUE} bytes, though a ByteBuffer's capacity is an int).
     */
    public static final long BUFFER_SLICE = 1L << 30;

    /** Adds a segment's bytes to a running CRC32C, in slices a ByteBuffer can address. */
    public static void updateCrc(CRC32C crc, MemorySegment bytes) {
        long size = bytes.byteSize();
        for (long at = 0; at < size; at += BUFFER_SLICE) {
            crc.update(bytes.asSlice(at, Math.min(BUFFER_SLICE, size - at)).asByteBuffer());
        }
    }

    /**
     * Reads a header at {@code offset} of {@code at}, checking only its own consistency (magic,
     * size, header checksum), not what it describes.
     *
     * @throws IllegalArgumentException saying what is wrong when the bytes are not a valid header
     */
    public static ChunkHeader readFrom(MemorySegment at, long offset) {
        String problem = checkStructure(at, offset);
        if (problem != null) {
            throw new IllegalArgumentException("chunk header at offset " + offset + ": " + problem);
        }
        MemorySegment h = at.asSlice(offset);
        int n = h.get(INT, OFF_TOKENS_COUNT);
        int[] tokens = new int[n];
        MemorySegment.copy(h, INT, FIXED_BYTES, tokens, 0, n);
        return new ChunkHeader(h.get(INT, OFF_VERSION), getKey(h, OFF_NAMESPACE), getKey(h, OFF_KEY),
                getKey(h, OFF_PARENT), tokens, h.get(LONG, OFF_PAYLOAD_LENGTH), h.get(INT, OFF_PAYLOAD_CRC));
    }

    /** Null when the bytes at offset are a self-consistent header of the current version, else the reason. */
    private static String checkStructure(MemorySegment at, long offset) {
        long available = at.byteSize() - offset;
        if (offset < 0 || available < FIXED_BYTES) {
            return "truncated: " + Math.max(0, available) + " bytes, a header needs at least " + FIXED_BYTES;
        }
        MemorySegment h = at.asSlice(offset);
        int magic = h.get(INT, 0);
        if (magic != MAGIC) {
            return "bad magic 0x" + HexFormat.of().toHexDigits(magic) + ", expected \"KVTC\"";
        }
        int version = h.get(INT, OFF_VERSION);
        if (version != Namespace.FORMAT_VERSION) {
            return "format version " + version + ", this build reads " + Namespace.FORMAT_VERSION;
        }
        int n = h.get(INT, OFF_TOKENS_COUNT);
        if (n < 0 || encodedSize(n) > available) {
            return "truncated or corrupt: header says " + n + " tokens, " + available + " bytes available";
        }
        int stored = h.get(INT, OFF_HEADER_CRC);
        int actual = headerCrc(h, n);
        if (stored != actual) {
            return "header checksum mismatch (stored 0x" + HexFormat.of().toHexDigits(stored) + ", computed 0x"
                    + HexFormat.of().toHexDigits(actual) + ")";
        }
        return null;
    }

    /** Outcome of verifying a stored chunk. */
    public sealed interface Verification {
        /** Header and payload match what was expected. */
        record Ok() implements Verification {
        }

        /** They do not; the chunk must not be used. */
        record Corrupt(String reason) implements Verification {
        }

        /** Whether the chunk may be used. */
        default boolean ok() {
            return this instanceof Ok;
        }
    }

    private static final Verification.Ok OK = new Verification.Ok();

    /**
     * Checks this header against what the reader expects and the payload bytes against the
     * recorded length and checksum. Never throws for bad data.
     */
    public Verification verify(BlockKey expectedNamespace, BlockKey expectedKey, BlockKey expectedParent,
                               int[] expectedTokens, MemorySegment payload) {
        if (formatVersion != Namespace.FORMAT_VERSION) {
            return new Verification.Corrupt("format version " + formatVersion + ", expected " + Namespace.FORMAT_VERSION);
        }
        String mismatch = mismatch(namespace, key, parent, expectedNamespace, expectedKey, expectedParent);
        if (mismatch == null && !Arrays.equals(tokens, expectedTokens)) {
            mismatch = "token ids differ from the expected ones (a key collision or a foreign chunk)";
        }
        if (mismatch == null) {
            mismatch = payloadMismatch(payloadLength, payloadCrc, payload);
        }
        return mismatch == null ? OK : new Verification.Corrupt(mismatch);
    }

    /**
     * Reads the header at {@code offset} of {@code at} and verifies it and {@code payload}
     * against the expected fields, in place, without allocating the header. Never throws for bad
     * data: a truncated, foreign or damaged header is {@link Verification.Corrupt}.
     */
    public static Verification verifyAt(MemorySegment at, long offset, BlockKey expectedNamespace, BlockKey expectedKey,
                                        BlockKey expectedParent, int[] expectedTokens, MemorySegment payload) {
        String problem = checkStructure(at, offset);
        if (problem != null) {
            return new Verification.Corrupt("chunk header: " + problem);
        }
        MemorySegment h = at.asSlice(offset);
        String mismatch = mismatch(getKey(h, OFF_NAMESPACE), getKey(h, OFF_KEY), getKey(h, OFF_PARENT),
                expectedNamespace, expectedKey, expectedParent);
        if (mismatch == null) {
            int n = h.get(INT, OFF_TOKENS_COUNT);
            if (n != expectedTokens.length) {
                mismatch = "header has " + n + " token ids, expected " + expectedTokens.length;
            } else {
                for (int i = 0; i < n; i++) {
                    if (h.get(INT, FIXED_BYTES + 4L * i) != expectedTokens[i]) {
                        mismatch = "token id #" + i + " differs from the expected one (a key collision or a foreign chunk)";
                        break;
                    }
                }
            }
        }
        if (mismatch == null) {
            mismatch = payloadMismatch(h.get(LONG, OFF_PAYLOAD_LENGTH), h.get(INT, OFF_PAYLOAD_CRC), payload);
        }
        return mismatch == null ? OK : new Verification.Corrupt(mismatch);
    }

    private static String mismatch(BlockKey ns, BlockKey key, BlockKey parent,
                                   BlockKey expectedNs, BlockKey expectedKey, BlockKey expectedParent) {
        if (!ns.equals(expectedNs)) {
            return "namespace " + ns.shortHex() + " differs from the expected " + expectedNs.shortHex();
        }
        if (!key.equals(expectedKey)) {
            return "key " + key.shortHex() + " differs from the expected " + expectedKey.shortHex();
        }
        if (!parent.equals(expectedParent)) {
            return "parent key " + parent.shortHex() + " differs from the expected " + expectedParent.shortHex();
        }
        return null;
    }

    private static String payloadMismatch(long length, int crc, MemorySegment payload) {
        if (length != payload.byteSize()) {
            return "payload length " + length + " in the header, expected " + payload.byteSize();
        }
        int actual = crc32c(payload);
        if (actual != crc) {
            return "payload checksum mismatch (header 0x" + HexFormat.of().toHexDigits(crc) + ", bytes 0x"
                    + HexFormat.of().toHexDigits(actual) + ")";
        }
        return null;
    }

    private static void putKey(MemorySegment h, long at, BlockKey k) {
        h.set(DIGEST_WORD, at, k.w0());
        h.set(DIGEST_WORD, at + 8, k.w1());
        h.set(DIGEST_WORD, at + 16, k.w2());
        h.set(DIGEST_WORD, at + 24, k.w3());
    }

    private static BlockKey getKey(MemorySegment h, long at) {
        return new BlockKey(h.get(DIGEST_WORD, at), h.get(DIGEST_WORD, at + 8), h.get(DIGEST_WORD, at + 16),
                h.get(DIGEST_WORD, at + 24));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ChunkHeader c && formatVersion == c.formatVersion && namespace.equals(c.namespace)
                && key.equals(c.key) && parent.equals(c.parent) && Arrays.equals(tokens, c.tokens)
                && payloadLength == c.payloadLength && payloadCrc == c.payloadCrc;
    }

    @Override
    public int hashCode() {
        return Objects.hash(formatVersion, namespace, key, parent, Arrays.hashCode(tokens), payloadLength, payloadCrc);
    }

    @Override
    public String toString() {
        return "ChunkHeader[v" + formatVersion + " ns=" + namespace.shortHex() + " key=" + key.shortHex() + " parent="
                + parent.shortHex() + " tokens=" + tokens.length + " payload=" + payloadLength + "B crc=0x"
                + HexFormat.of().toHexDigits(payloadCrc) + "]";
    }
}

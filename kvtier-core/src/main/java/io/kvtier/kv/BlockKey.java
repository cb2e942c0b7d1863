package io.kvtier.kv;

import java.nio.ByteBuffer;
import java.util.HexFormat;

/**
 * The 32-byte SHA-256 key of one full block: digest of (parent key, the block's token ids,
 * extra keys). Equal keys mean equal prefixes, so a key names the KV of a whole prefix.
 * Held as four big-endian longs of the digest, for cheap hashing and comparison.
 */
public record BlockKey(long w0, long w1, long w2, long w3) {

    /** Number of bytes of a key when serialized. */
    public static final int BYTES = 32;

    /** Builds a key from 32 bytes (big-endian words); throws IllegalArgumentException otherwise. */
    public static BlockKey of(byte[] digest) {
        if (digest.length != BYTES) {
            throw new IllegalArgumentException("block key needs 32 bytes, got " + digest.length);
        }
        ByteBuffer b = ByteBuffer.wrap(digest);
        return new BlockKey(b.getLong(), b.getLong(), b.getLong(), b.getLong());
    }

    /** The 32 digest bytes. */
    public byte[] toBytes() {
        return ByteBuffer.allocate(BYTES).putLong(w0).putLong(w1).putLong(w2).putLong(w3).array();
    }

    /** Writes the 32 bytes at the buffer's position. */
    public void writeTo(ByteBuffer out) {
        out.putLong(w0).putLong(w1).putLong(w2).putLong(w3);
    }

    /** Reads 32 bytes at the buffer's position. */
    public static BlockKey readFrom(ByteBuffer in) {
        return new BlockKey(in.getLong(), in.getLong(), in.getLong(), in.getLong());
    }

    /** First 8 hex digits, for logs. */
    public String shortHex() {
        return HexFormat.of().toHexDigits(w0).substring(0, 8);
    }

    @Override
    public String toString() {
        return HexFormat.of().formatHex(toBytes());
    }
}

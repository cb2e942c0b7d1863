package io.kvtier.model;

import java.lang.foreign.MemorySegment;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** Hex SHA-256 digests of model bytes (the identity of a model's weights). */
public final class Sha256 {

    private Sha256() {
    }

    /** Hex SHA-256 of every byte of {@code seg}, read 1 MiB at a time. */
    public static String of(MemorySegment seg) {
        MessageDigest md = digest();
        long chunk = 1 << 20;
        for (long off = 0; off < seg.byteSize(); off += chunk) {
            md.update(seg.asSlice(off, Math.min(chunk, seg.byteSize() - off)).asByteBuffer());
        }
        return HexFormat.of().formatHex(md.digest());
    }

    /** Hex SHA-256 of {@code bytes}. */
    public static String of(byte[] bytes) {
        return HexFormat.of().formatHex(digest().digest(bytes));
    }

    private static MessageDigest digest() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every JDK", e);
        }
    }
}

package io.kvtier.kv;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * Digest of everything that makes stored KV incompatible: model identity, KV dtype, block size,
 * layer/head shapes and the chunk format version. It seeds the key chain.
 *
 * @param description human-readable canonical text the digest is computed from
 * @param digest      SHA-256 of the description
 */
public record Namespace(String description, BlockKey digest) {

    /** Version of the KV byte layout and chunk format; bump when either changes. */
    public static final int FORMAT_VERSION = 1;

    /**
     * Namespace of an engine. {@code modelId} must name the exact weights (kvtier uses the
     * SHA-256 of the model file), not only the architecture.
     */
    public static Namespace of(String modelId, KvLayout layout) {
        String text = "kvtier-kv|format=" + FORMAT_VERSION + "|model=" + modelId + "|dtype=f32"
                + "|layers=" + layout.layers() + "|kvHeads=" + layout.kvHeads()
                + "|headDim=" + layout.headDim() + "|blockSize=" + layout.blockSize();
        return new Namespace(text, BlockKey.of(sha256(text.getBytes(StandardCharsets.UTF_8))));
    }

    static byte[] sha256(byte[] bytes) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(bytes);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every JDK", e);
        }
    }
}

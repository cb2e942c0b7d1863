package io.kvtier.kv;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * Digest of everything that makes stored KV incompatible: model identity, KV dtype, block size,
 * layer/head shapes, the chunk geometry (blocks per chunk: a chunk is keyed by its last block's
 * key, so two geometries would otherwise give different chunks one key) and the chunk format
 * version. It seeds the key chain, so every tier (host, disk, remote) keeps each geometry apart.
 *
 * @param description    human-readable canonical text the digest is computed from
 * @param digest         SHA-256 of the description
 * @param blocksPerChunk device blocks per offloaded chunk the namespace was made for
 */
public record Namespace(String description, BlockKey digest, int blocksPerChunk) {

    /** Version of the KV byte layout and chunk format; bump when either changes. */
    public static final int FORMAT_VERSION = 1;

    /** Namespace of an engine that offloads one block per chunk (or does not offload). */
    public static Namespace of(String modelId, KvLayout layout) {
        return of(modelId, layout, 1);
    }

    /**
     * Namespace of an engine. {@code modelId} must name the exact weights (kvtier uses the
     * SHA-256 of the model file), not only the architecture.
     *
     * @param blocksPerChunk device blocks per offloaded chunk ({@code --blocks-per-chunk}, >= 1)
     */
    public static Namespace of(String modelId, KvLayout layout, int blocksPerChunk) {
        if (blocksPerChunk < 1) {
            throw new IllegalArgumentException("blocks per chunk must be at least 1, got " + blocksPerChunk);
        }
        String text = "kvtier-kv|format=" + FORMAT_VERSION + "|model=" + modelId + "|dtype=f32"
                + "|layers=" + layout.layers() + "|kvHeads=" + layout.kvHeads()
                + "|headDim=" + layout.headDim() + "|blockSize=" + layout.blockSize()
                + "|blocksPerChunk=" + blocksPerChunk;
        return new Namespace(text, BlockKey.of(sha256(text.getBytes(StandardCharsets.UTF_8))), blocksPerChunk);
    }

    static byte[] sha256(byte[] bytes) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(bytes);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every JDK", e);
        }
    }
}

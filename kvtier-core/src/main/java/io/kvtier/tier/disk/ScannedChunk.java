package io.kvtier.tier.disk;

import io.kvtier.kv.BlockKey;
import java.util.Objects;

/**
 * A chunk file found by a {@link DiskIndexScan}: its header was valid, of this namespace, named
 * after its key, and the file is exactly header + payload bytes. Its payload was not read (every
 * read verifies it).
 *
 * @param key           chunk key
 * @param parent        parent key (from the header)
 * @param tokenCount    token ids in the header
 * @param payloadLength payload bytes (from the header); the engine should adopt only chunks of its
 *                      own payload size (a different {@code blocksPerChunk} gives other sizes)
 * @param fileBytes     size of the file in bytes
 * @param mtimeMillis   last modification time of the file, milliseconds since the epoch
 */
public record ScannedChunk(BlockKey key, BlockKey parent, int tokenCount, long payloadLength, long fileBytes,
                           long mtimeMillis) {
    public ScannedChunk {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(parent, "parent");
    }
}

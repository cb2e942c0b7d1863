package io.kvtier.offload.transfer;

import io.kvtier.kv.BlockKey;
import java.util.Arrays;
import java.util.Objects;

/**
 * One chunk of a transfer job: which device blocks (in position order) move to or from which
 * tier slot, and the header fields that the stored chunk carries (store) or must carry (load).
 * Immutable: the arrays are copied in and out.
 *
 * <p>A load may name a block as {@code -1}: that block of the chunk is already on the device (a
 * device hit ending inside the chunk); it is verified as part of the payload but not copied.
 *
 * @param deviceBlocks device block ids, in position order (or -1, loads only); payload = the
 *                     chunk's blocks concatenated, {@code deviceBlocks.length * bytesPerBlock} bytes
 * @param slot         tier slot
 * @param namespace    namespace digest of the engine
 * @param key          chunk key (key of the last block)
 * @param parent       key before the first block
 * @param tokens       token ids of the chunk's blocks, in position order
 */
public record ChunkCopy(int[] deviceBlocks, int slot, BlockKey namespace, BlockKey key, BlockKey parent, int[] tokens) {

    public ChunkCopy {
        deviceBlocks = deviceBlocks.clone();
        tokens = tokens.clone();
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(parent, "parent");
        if (deviceBlocks.length == 0) {
            throw new IllegalArgumentException("chunk " + key.shortHex() + " has no device blocks");
        }
        for (int b : deviceBlocks) {
            if (b < -1) {
                throw new IllegalArgumentException("chunk " + key.shortHex() + ": device block " + b
                        + " (ids are >= 0, or -1 for a block not to copy)");
            }
        }
        if (slot < 0) {
            throw new IllegalArgumentException("chunk " + key.shortHex() + ": negative slot " + slot);
        }
    }

    /** Device block ids (a copy). */
    @Override
    public int[] deviceBlocks() {
        return deviceBlocks.clone();
    }

    /** Token ids (a copy). */
    @Override
    public int[] tokens() {
        return tokens.clone();
    }

    /** Number of device blocks. */
    public int blockCount() {
        return deviceBlocks.length;
    }

    /** Device block id at position {@code i} of the chunk, or -1 for a block a load does not copy. */
    public int deviceBlock(int i) {
        return deviceBlocks[i];
    }

    /** Number of device blocks that are copied (ids other than -1). */
    public int copiedBlockCount() {
        int n = 0;
        for (int b : deviceBlocks) {
            if (b >= 0) {
                n++;
            }
        }
        return n;
    }

    /** Token ids without copying, for the data path in this package. */
    int[] tokensShared() {
        return tokens;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ChunkCopy c && slot == c.slot && Arrays.equals(deviceBlocks, c.deviceBlocks)
                && namespace.equals(c.namespace) && key.equals(c.key) && parent.equals(c.parent)
                && Arrays.equals(tokens, c.tokens);
    }

    @Override
    public int hashCode() {
        return Objects.hash(Arrays.hashCode(deviceBlocks), slot, namespace, key, parent, Arrays.hashCode(tokens));
    }

    @Override
    public String toString() {
        return "ChunkCopy[key=" + key.shortHex() + " blocks=" + Arrays.toString(deviceBlocks) + " slot=" + slot
                + " tokens=" + tokens.length + "]";
    }
}

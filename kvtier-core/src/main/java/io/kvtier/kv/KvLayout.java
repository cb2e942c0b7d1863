package io.kvtier.kv;

/**
 * Shape of the paged KV cache. One block is one contiguous range of
 * {@link #bytesPerBlock()} bytes laid out as {@code [layers][2][blockSize][kvHeads][headDim]}
 * float32 (index 0 of the second dimension is K, 1 is V), so a block moves between tiers in
 * one memory copy.
 *
 * @param layers    transformer layers
 * @param kvHeads   key/value heads per layer
 * @param headDim   floats per head
 * @param blockSize token positions per block
 */
public record KvLayout(int layers, int kvHeads, int headDim, int blockSize) {

    public KvLayout {
        if (layers <= 0 || kvHeads <= 0 || headDim <= 0 || blockSize <= 0) {
            throw new IllegalArgumentException("KV layout dimensions must be positive: " + this);
        }
    }

    /** Floats of K (or of V) for one position of one layer: kvHeads * headDim. */
    public int kvDim() {
        return kvHeads * headDim;
    }

    /** Floats in one block. */
    public long floatsPerBlock() {
        return (long) layers * 2 * blockSize * kvDim();
    }

    /** Bytes in one block. */
    public long bytesPerBlock() {
        return floatsPerBlock() * Float.BYTES;
    }

    /**
     * Float index, within one block, of the first float of K (kv=0) or V (kv=1) at
     * {@code slot} (0..blockSize-1) of {@code layer}.
     */
    public long floatOffset(int layer, int kv, int slot) {
        return (((long) layer * 2 + kv) * blockSize + slot) * kvDim();
    }

    /** Byte offset of the same, within one block. */
    public long byteOffset(int layer, int kv, int slot) {
        return floatOffset(layer, kv, slot) * Float.BYTES;
    }

    /** Blocks needed to hold {@code positions} token positions. */
    public int blocksFor(long positions) {
        return (int) ((positions + blockSize - 1) / blockSize);
    }
}

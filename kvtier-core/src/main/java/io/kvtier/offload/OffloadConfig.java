package io.kvtier.offload;

import java.time.Duration;

/**
 * Offloading knobs.
 *
 * @param blocksPerChunk    device blocks per stored chunk (default 1); a chunk is keyed by its last block's key
 * @param offloadPromptOnly store only blocks that hold at least one prompt token (default true);
 *                          false stores blocks completed during decode too
 * @param jobDeadline       a transfer not completed by then fails for its request; its device
 *                          blocks and tier slots stay held until it really completes
 */
public record OffloadConfig(int blocksPerChunk, boolean offloadPromptOnly, Duration jobDeadline) {

    public static final OffloadConfig DEFAULT = new OffloadConfig(1, true, Duration.ofSeconds(10));

    public OffloadConfig {
        if (blocksPerChunk < 1) {
            throw new IllegalArgumentException("blocks per chunk must be at least 1, got " + blocksPerChunk);
        }
        if (jobDeadline.isNegative() || jobDeadline.isZero()) {
            throw new IllegalArgumentException("job deadline must be positive, got " + jobDeadline);
        }
    }

    public OffloadConfig withBlocksPerChunk(int n) {
        return new OffloadConfig(n, offloadPromptOnly, jobDeadline);
    }

    public OffloadConfig withOffloadPromptOnly(boolean on) {
        return new OffloadConfig(blocksPerChunk, on, jobDeadline);
    }

    public OffloadConfig withJobDeadline(Duration d) {
        return new OffloadConfig(blocksPerChunk, offloadPromptOnly, d);
    }
}

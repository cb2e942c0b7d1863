package io.kvtier.offload;

import java.util.Map;

/**
 * A load that ended for a request that still waits for it ({@link OffloadScheduler#poll}): of the
 * {@code blocks} blocks from {@code firstBlock}, the first {@code goodBlocks} now hold verified KV;
 * the rest must be recomputed. {@code lostTokensByTier}: tokens counted as hits that were not loaded.
 */
public record LoadDone(long requestId, String tier, int firstBlock, int blocks, int goodBlocks,
                       Map<String, Integer> lostTokensByTier) {
    public boolean success() {
        return goodBlocks == blocks;
    }
}

package io.kvtier.offload.transfer;

import java.util.List;

/**
 * Device -> tier: for each chunk, its device blocks' bytes become the slot's payload and a
 * {@link io.kvtier.tier.ChunkHeader} with their CRC32C is written in front of it. The source
 * blocks must stay unchanged until the job's result is collected.
 */
public record StoreJob(long jobId, List<ChunkCopy> chunks, long deadlineNanos) implements TransferJob {
    public StoreJob {
        chunks = List.copyOf(chunks);
    }
}

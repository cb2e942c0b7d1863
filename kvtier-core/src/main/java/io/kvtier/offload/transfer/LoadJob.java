package io.kvtier.offload.transfer;

import java.util.List;

/**
 * Tier -> device: for each chunk in order, the slot's header and payload are verified against
 * the expected fields, and only then the payload is copied into the device blocks. The first
 * chunk that fails verification fails the job; nothing is copied from it onward.
 */
public record LoadJob(long jobId, List<ChunkCopy> chunks, long deadlineNanos) implements TransferJob {
    public LoadJob {
        chunks = List.copyOf(chunks);
    }
}

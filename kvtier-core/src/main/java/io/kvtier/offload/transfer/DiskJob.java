package io.kvtier.offload.transfer;

import io.kvtier.kv.BlockKey;
import java.util.List;

/**
 * Host tier <-> disk tier, on the transfer engine's disk thread. Each chunk names a host slot and
 * the chunk's identity; its {@link ChunkCopy#deviceBlocks()} are all -1 (no device memory is
 * touched) and only give the chunk's size in blocks.
 *
 * <ul>
 *   <li>{@link Kind#WRITE}: the host slot (header and payload, written and verified by a host
 *       store) is published as the chunk's file; the slot is only read.</li>
 *   <li>{@link Kind#READ}: the chunk's file is read and verified into the host slot, header
 *       included, so the slot then holds a valid host chunk (promotion). A chunk whose file is
 *       missing or corrupt fails the job from that chunk on; a corrupt file is deleted.</li>
 * </ul>
 * {@code deletions} are files of evicted chunks, deleted before any chunk is written.
 */
public record DiskJob(long jobId, Kind kind, List<ChunkCopy> chunks, List<BlockKey> deletions, long deadlineNanos)
        implements TransferJob {

    /** Direction. */
    public enum Kind { WRITE, READ }

    public DiskJob {
        chunks = List.copyOf(chunks);
        deletions = List.copyOf(deletions);
    }
}

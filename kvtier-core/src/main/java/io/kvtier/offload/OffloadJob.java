package io.kvtier.offload;

import io.kvtier.kv.BlockKey;
import java.util.List;

/**
 * A transfer the offload scheduler started: one load or one store of whole chunks between device
 * blocks and one tier. Holds a reference on each of its device blocks from creation to its real
 * completion (ARCHITECTURE §3.2). Immutable.
 */
public sealed interface OffloadJob {

    long id();

    long requestId();

    /** Device blocks the transfer reads (store) or writes (load), each referenced once by this job. */
    int[] deviceBlocks();

    /** Chunk keys, head first. */
    List<BlockKey> chunkKeys();

    /** Cache epoch the job was created in; completions from an older epoch are ignored. */
    long epoch();

    /** {@link System#nanoTime()} after which the job fails for its request. */
    long deadlineNanos();

    String tier();

    /**
     * Load of blocks [firstBlock, firstBlock + blocks) of a request. {@code chunkBlocks[i]} is how
     * many of chunk i's blocks are loaded (the first chunk may be partly on the device already).
     */
    record Load(long id, long requestId, String tier, int firstBlock, int blocks, int[] deviceBlocks,
                List<BlockKey> chunkKeys, int[] chunkBlocks, long epoch, long deadlineNanos) implements OffloadJob {
    }

    /** Store of the request's chunks [firstChunk, firstChunk + chunkKeys.size()) that the tier accepted. */
    record Store(long id, long requestId, String tier, int firstChunk, int[] deviceBlocks, List<BlockKey> chunkKeys,
                 long epoch, long deadlineNanos) implements OffloadJob {
    }
}

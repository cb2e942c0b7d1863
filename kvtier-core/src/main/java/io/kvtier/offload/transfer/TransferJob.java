package io.kvtier.offload.transfer;

import java.util.List;

/**
 * An asynchronous copy of chunks between the device slab and a tier, with an id from the
 * scheduler's job counter and an absolute deadline on the engine's clock
 * ({@link TransferEngine#nanoTime()}). Immutable.
 */
public sealed interface TransferJob permits StoreJob, LoadJob, DiskJob, RemoteJob {

    /** Id, unique among the jobs of one engine. */
    long jobId();

    /** Chunks in the order they are copied (a chain, head first). */
    List<ChunkCopy> chunks();

    /** The job fails if it has not completed by this time (engine clock, nanoseconds). */
    long deadlineNanos();
}

package io.kvtier.offload.transfer;

import java.util.List;

/**
 * Host tier <-> remote tier (Redis / Valkey), on the transfer engine's remote threads. Each chunk
 * names a host slot and the chunk's identity; its {@link ChunkCopy#deviceBlocks()} are all -1 and
 * only give the chunk's size in blocks. The commands of one job are pipelined: all are sent,
 * then their answers are taken in chunk order; a read keeps {@link RemoteCopier#READ_WINDOW_BYTES}
 * of values asked for and sends the next GET as each answer is taken.
 *
 * <ul>
 *   <li>{@link Kind#PROBE}: asks whether each chunk's key exists (refreshing its recency); the
 *       slot is not touched. The job fails at the first chunk that is absent or unanswered.</li>
 *   <li>{@link Kind#READ}: reads and verifies each chunk's value into its host slot, header
 *       included (promotion); a nil, short or bad value fails the job from that chunk on, and a
 *       bad value is deleted.</li>
 *   <li>{@link Kind#WRITE}: sends each host slot (header and payload) as the chunk's value; the
 *       slot is only read.</li>
 * </ul>
 * A failed job's error starts with its cause: {@code miss}, {@code timeout}, {@code verify},
 * {@code unavailable}, {@code oversize} or {@code error}, then ": " and the detail.
 */
public record RemoteJob(long jobId, Kind kind, List<ChunkCopy> chunks, long deadlineNanos) implements TransferJob {

    /** What the job does. */
    public enum Kind { PROBE, READ, WRITE }

    public RemoteJob {
        chunks = List.copyOf(chunks);
    }
}

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
 *   <li>{@link Kind#LOAD}: a remote hit loaded straight through to the device. The chunks marked
 *       {@code inHost} are already whole in their host slots; the others are read as by
 *       {@link Kind#READ}. Each chunk, once whole and verified in its slot (a read one: where it
 *       arrived), is copied into its device blocks at once (blocks -1 skipped), while the later
 *       values are still on their way; the job fails at the first chunk that fails.</li>
 * </ul>
 * A failed job's error starts with its cause: {@code miss}, {@code timeout}, {@code verify},
 * {@code unavailable}, {@code oversize} or {@code error}, then ": " and the detail.
 */
public record RemoteJob(long jobId, Kind kind, List<ChunkCopy> chunks, long deadlineNanos, boolean[] inHost)
        implements TransferJob {

    /** What the job does. */
    public enum Kind { PROBE, READ, WRITE, LOAD }

    /**
     * @param inHost per chunk, whether it is already in its host slot ({@link Kind#LOAD} only; null: none)
     * @throws IllegalArgumentException for {@code inHost} of another length, or given for another kind
     */
    public RemoteJob {
        chunks = List.copyOf(chunks);
        inHost = inHost == null ? new boolean[chunks.size()] : inHost.clone();
        boolean marked = false;
        for (boolean m : inHost) {
            marked |= m;
        }
        if (inHost.length != chunks.size() || (kind != Kind.LOAD && marked)) {
            throw new IllegalArgumentException("remote job " + jobId + " (" + kind + "): " + inHost.length
                    + " host marks for " + chunks.size() + " chunks");
        }
    }

    /** A job that reads no chunk from the host tier. */
    public RemoteJob(long jobId, Kind kind, List<ChunkCopy> chunks, long deadlineNanos) {
        this(jobId, kind, chunks, deadlineNanos, null);
    }

    /** Whether chunk {@code i} is already whole in its host slot (a {@link Kind#LOAD} copies it on to the device). */
    public boolean inHost(int i) {
        return inHost[i];
    }

    @Override
    public boolean[] inHost() {
        return inHost.clone();
    }

    /** Whether the job writes device blocks ({@link Kind#LOAD}). */
    public boolean toDevice() {
        return kind == Kind.LOAD;
    }
}

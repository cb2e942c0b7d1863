package io.kvtier.offload.transfer;

/**
 * What became of a transfer job; every submitted job gets exactly one.
 *
 * @param jobId            the job
 * @param success          all chunks were copied (and, for a load, verified)
 * @param bytes            payload bytes copied, over the chunks that completed
 * @param nanos            time the job took: from the start of its execution to its end, or for
 *                         a job that missed its deadline, from submission to the deadline check
 * @param firstFailedChunk index of the first chunk not copied (the chunks before it were
 *                         copied completely), or -1 on success; 0 for a missed deadline or a job
 *                         failed as a whole
 * @param error            why it failed, null on success
 */
public record TransferResult(long jobId, boolean success, long bytes, long nanos, int firstFailedChunk, String error) {

    /** Error text of a job that missed its deadline. */
    public static final String DEADLINE_EXCEEDED = "deadline exceeded";

    public TransferResult {
        if (success != (firstFailedChunk == -1) || success != (error == null)) {
            throw new IllegalArgumentException("inconsistent result for job " + jobId + ": success=" + success
                    + " firstFailedChunk=" + firstFailedChunk + " error=" + error);
        }
    }

    /** A job whose chunks were all copied. */
    public static TransferResult ok(long jobId, long bytes, long nanos) {
        return new TransferResult(jobId, true, bytes, nanos, -1, null);
    }

    /** A job that failed at chunk {@code firstFailedChunk}. */
    public static TransferResult failed(long jobId, long bytes, long nanos, int firstFailedChunk, String error) {
        return new TransferResult(jobId, false, bytes, nanos, firstFailedChunk, error);
    }

    /** Whether the job failed because it missed its deadline. */
    public boolean timedOut() {
        return DEADLINE_EXCEEDED.equals(error);
    }
}

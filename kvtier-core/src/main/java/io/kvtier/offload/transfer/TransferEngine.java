package io.kvtier.offload.transfer;

import java.time.Duration;
import java.util.Collection;
import java.util.List;

/**
 * Executes transfer jobs asynchronously. {@link #submit}, {@link #poll} and {@link #await} are
 * called from one thread, the engine thread; jobs and results are immutable messages.
 *
 * <p>Every submitted job yields exactly one {@link TransferResult}, returned by exactly one call
 * of {@link #poll} or {@link #await}: success, failure, or failure at its deadline. A job that
 * missed its deadline is reported failed once, when the engine thread checks; after that the
 * engine touches none of its memory again, and a late completion is dropped.
 */
public interface TransferEngine extends AutoCloseable {

    /**
     * Queues a job. Jobs of one direction (stores, loads) run in submission order.
     *
     * @throws IllegalArgumentException if the job names blocks or slots out of range, a payload
     *                                  larger than a slot, or an id already in flight
     * @throws IllegalStateException    after {@link #close()}
     */
    void submit(TransferJob job);

    /** Results of jobs completed (or past their deadline) since the last call; never blocks. */
    List<TransferResult> poll();

    /**
     * Waits until every listed job has a result or {@code timeout} elapsed, and returns the
     * results of the listed jobs that completed, in completion order. Results of other jobs are
     * kept for {@link #poll}. Ids that are not in flight are ignored. If the thread is
     * interrupted, returns what completed so far with the interrupt flag set.
     */
    List<TransferResult> await(Collection<Long> jobIds, Duration timeout);

    /**
     * Like {@link #await} but returns as soon as at least one listed job has a result (or the
     * timeout elapsed, or none of them is in flight): the results of the listed jobs completed
     * by then.
     */
    List<TransferResult> awaitAny(Collection<Long> jobIds, Duration timeout);

    /**
     * Whether the engine runs {@link RemoteJob.Kind#LOAD} (a remote hit read straight through its
     * host slots into the device). Without it the scheduler promotes a remote hit into the host
     * tier first and loads it from there, two jobs one after the other.
     */
    default boolean loadsFromRemote() {
        return false;
    }

    /** The clock that {@link TransferJob#deadlineNanos()} refers to, in nanoseconds. */
    long nanoTime();

    /** Number of jobs submitted whose result has not been returned yet. */
    int inFlight();

    /**
     * Stops the engine. Jobs in flight are abandoned without results; when this returns, no
     * engine thread touches device or tier memory any more.
     */
    @Override
    void close();
}

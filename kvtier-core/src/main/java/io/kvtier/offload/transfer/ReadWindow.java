package io.kvtier.offload.transfer;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.IntFunction;
import java.util.function.IntPredicate;

/**
 * The GETs of one read job ({@link RemoteJob.Kind#READ} or {@link RemoteJob.Kind#LOAD}): which
 * are sent when. At most {@code window} GETs are outstanding (asked for, not answered); the
 * first {@code firstGets} are sent at once and each answer sends up to two more, so the window
 * opens one value per answer. The next GETs are sent where an answer completes (the store's I/O
 * thread), not by the thread that takes the answers in order, so the store never waits for that
 * thread to wake.
 *
 * <p>Why not the whole window at once: Redis runs every command of a pipelined burst (copying
 * each value into the client's reply buffers) before it writes the first reply, so with 28 GETs of
 * 1.18 MB sent together the first value arrived after all 33 MB had been copied, and the client
 * verified and copied nothing in that time. Opening the window one value at a time overlaps the
 * server's copies with the client's from the first value on.
 *
 * <p>Thread-safe: answers complete on the store's threads (one per node on a cluster).
 */
final class ReadWindow {

    /** GETs sent at the start of a job: the first value comes after the server has copied only these. */
    static final int FIRST_GETS = Integer.getInteger("kvtier.remote.firstGets", 2);

    private final List<CompletableFuture<Object>> answers;
    private final IntPredicate inHost;
    private final IntFunction<CompletableFuture<?>> send;
    private final int window;
    private final int firstGets;
    private int sent;        // guarded by this
    private int outstanding; // guarded by this
    private boolean stopped; // guarded by this

    /**
     * @param chunks    the job's chunk count
     * @param window    GETs outstanding at most (at least one)
     * @param firstGets GETs sent at the start (at least one; at most {@code window})
     * @param inHost    whether chunk i is already in its host slot: no GET, its answer is null at once
     * @param send      sends the GET of chunk i; its future's value is the chunk's answer, null when
     *                  the chunk is whole in its slot (any other value or an exception: the chunk
     *                  failed, and no GET is sent after it)
     */
    ReadWindow(int chunks, int window, int firstGets, IntPredicate inHost, IntFunction<CompletableFuture<?>> send) {
        this.answers = new ArrayList<>(chunks);
        for (int i = 0; i < chunks; i++) {
            answers.add(new CompletableFuture<>());
        }
        this.window = Math.max(1, window);
        this.firstGets = Math.max(1, Math.min(this.window, firstGets));
        this.inHost = inHost;
        this.send = send;
    }

    /** Sends the first GETs; the answers, in chunk order (each completes once its GET is answered). */
    List<CompletableFuture<Object>> start() {
        refill(0, firstGets);
        return answers;
    }

    /** No GET is sent any more (the job ended: done, failed or expired); those in flight still complete. */
    synchronized void stop() {
        stopped = true;
    }

    /** One GET was answered ({@code answered} 1) or none (the start): sends up to {@code most} more. */
    private void refill(int answered, int most) {
        List<Integer> toSend = new ArrayList<>(most);
        synchronized (this) {
            outstanding -= answered;
            while (!stopped && sent < answers.size() && outstanding < window && toSend.size() < most) {
                int i = sent++;
                if (inHost.test(i)) {
                    answers.get(i).complete(null); // already whole in its slot: the taker copies it on
                } else {
                    toSend.add(i);
                    outstanding++;
                }
            }
        }
        for (int i : toSend) {
            send.apply(i).whenComplete((v, err) -> {
                if (err != null || v != null) {
                    stop(); // a failed chunk cuts the job there: the later values would not be used
                }
                refill(1, 2); // the next GETs first: the server works while this answer is taken
                if (err == null) {
                    answers.get(i).complete(v);
                } else {
                    answers.get(i).completeExceptionally(err);
                }
            });
        }
    }

    /** GETs sent so far (for tests). */
    synchronized int sent() {
        return sent;
    }
}

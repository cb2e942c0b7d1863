package io.kvtier.tier.remote;

import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

/**
 * The trials a remote store sends itself when a breaker's open period ends. Operations try a
 * half-open breaker as they come, but an idle engine sends none: its breaker would stay
 * half-open, the store's return unnoticed (no "answers again" line, the gauge never back to
 * {@code closed}) until the next request. Each opening and re-opening schedules one trial for
 * the end of the period, at most one pending per breaker: a breaker closed by then needs none,
 * one re-opened meanwhile waits for its new end. Thread-safe.
 */
final class BreakerTrials {

    /** Least delay of a trial: an open period of 0 must not turn a dead store into a busy loop. */
    static final long MIN_DELAY_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private final ScheduledExecutorService executor;
    private final BiConsumer<String, CircuitBreaker> trial;
    private final Set<CircuitBreaker> pending = ConcurrentHashMap.newKeySet();

    /**
     * @param executor runs the trials (the client's; once it is shut down, no trial is scheduled)
     * @param trial    sends the trial of a half-open breaker and records its outcome in it (a node,
     *                 or null for the connection's breaker)
     */
    BreakerTrials(ScheduledExecutorService executor, BiConsumer<String, CircuitBreaker> trial) {
        this.executor = executor;
        this.trial = trial;
    }

    /** A breaker's {@code whenOpened}: its trial at the end of its open period. */
    void schedule(String node, CircuitBreaker b) {
        if (!pending.add(b)) {
            return;
        }
        try {
            executor.schedule(() -> due(node, b), Math.max(MIN_DELAY_NANOS, b.untilTrial(System.nanoTime())),
                    TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException closing) {
            pending.remove(b);
        }
    }

    private void due(String node, CircuitBreaker b) {
        pending.remove(b);
        switch (b.state(System.nanoTime())) {
            case OPEN -> schedule(node, b);
            case HALF_OPEN -> trial.accept(node, b);
            case CLOSED -> {
                // an operation's success closed it
            }
        }
    }

    /**
     * A PING to {@code node} over {@code conn} (the standalone connection, or the cluster node of
     * that id), ending within {@code timeout}: a node connection still being made would otherwise
     * have the 10 s connect deadline.
     */
    @SuppressWarnings("unchecked")
    static CompletableFuture<String> ping(StatefulConnection<String, byte[]> conn, String node, Duration timeout) {
        try {
            CompletableFuture<String> p = conn instanceof StatefulRedisClusterConnection<String, byte[]> c
                    ? c.getConnectionAsync(node).thenCompose(n -> n.async().ping())
                    : ((StatefulRedisConnection<String, byte[]>) conn).async().ping().toCompletableFuture();
            // copy(): the timeout ends this future, not Lettuce's command.
            return p.copy().orTimeout(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (RuntimeException e) { // the client is closing, or the node is gone from its view
            return CompletableFuture.failedFuture(e);
        }
    }
}

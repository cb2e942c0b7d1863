package io.kvtier.tier.remote;

import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

/**
 * The trials a remote store sends itself when a breaker's open period ends, and its checks of
 * quiet nodes. Operations try a half-open breaker as they come, but an idle engine sends none:
 * its breaker would stay half-open, the store's return unnoticed (no "answers again" line, the
 * gauge never back to {@code closed}) until the next request. Each opening and re-opening
 * schedules one trial for the end of the period, at most one pending per breaker: a breaker
 * closed by then needs none, one re-opened meanwhile waits for its new end. Likewise an idle
 * engine fails no operation when its store dies or freezes, so its breakers would read closed
 * until the next request (which then pays the timeouts that open them): a closed breaker that
 * has seen no success for the quiet period gets the same trial, a PING ({@link #watchQuiet}).
 * While operations succeed no PING is sent. Thread-safe.
 */
final class BreakerTrials {

    /** Least delay of a trial: an open period of 0 must not turn a dead store into a busy loop. */
    static final long MIN_DELAY_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    /** Least quiet period: a short open period must not make an idle engine PING its store hundreds of times a second. */
    static final long MIN_QUIET_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private final ScheduledExecutorService executor;
    private final BiConsumer<String, CircuitBreaker> trial;
    private final Set<CircuitBreaker> pending = ConcurrentHashMap.newKeySet();
    private final long quietNanos;

    /**
     * @param executor   runs the trials (the client's; once it is shut down, no trial is scheduled)
     * @param trial      sends the trial of a breaker that is half-open, or closed and quiet
     *                   ({@link CircuitBreaker#startPing}), and records its outcome in it (a node,
     *                   or null for the connection's breaker)
     * @param openNanos  the breakers' open period: also the quiet period (at least {@link #MIN_QUIET_NANOS})
     */
    BreakerTrials(ScheduledExecutorService executor, BiConsumer<String, CircuitBreaker> trial, long openNanos) {
        this.executor = executor;
        this.trial = trial;
        this.quietNanos = Math.max(MIN_QUIET_NANOS, openNanos);
    }

    /** How long a closed breaker may see no success before it is tried. */
    long quietNanos() {
        return quietNanos;
    }

    /**
     * Tries, from now until the executor ends, each closed breaker of {@code nodes} (the nodes
     * serving now; asked again each time) that has seen no success for {@link #quietNanos}.
     */
    void watchQuiet(Supplier<Map<String, CircuitBreaker>> nodes) {
        long next = quietNanos;
        try {
            long now = System.nanoTime();
            for (Map.Entry<String, CircuitBreaker> e : nodes.get().entrySet()) {
                long until = e.getValue().untilQuietPing(now, quietNanos);
                if (until == 0) {
                    trial.accept(e.getKey(), e.getValue());
                } else {
                    next = Math.min(next, until);
                }
            }
        } finally { // a check that threw (the client closing under it) must not end the watch
            try {
                executor.schedule(() -> watchQuiet(nodes), Math.max(MIN_DELAY_NANOS, next), TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException closing) {
                // the store is closing: no more checks
            }
        }
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
            return p.copy().orTimeout(timeout.toNanos(), TimeUnit.NANOSECONDS).exceptionallyCompose(e -> CompletableFuture.failedFuture(
                    e instanceof TimeoutException ? new RemoteFailure(RemoteFailure.Cause.TIMEOUT, "no answer to PING within "
                            + timeout.toMillis() + " ms") : e));
        } catch (RuntimeException e) { // the client is closing, or the node is gone from its view
            return CompletableFuture.failedFuture(e);
        }
    }
}

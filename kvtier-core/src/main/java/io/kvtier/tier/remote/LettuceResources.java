package io.kvtier.tier.remote;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.metrics.CommandLatencyRecorder;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import io.netty.resolver.DefaultAddressResolverGroup;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The Lettuce client's threads and helpers, trimmed to what one store of a process needs, and
 * their bounded shutdown. Lettuce's defaults cost start-up CPU the tier never uses: an event
 * loop per core (the tier's traffic is one connection per node), Netty's
 * asynchronous DNS resolver (dozens of classes, for the one name a URL holds), per-command
 * latency metrics, and JFR events for every connection event (which load and start the JDK's
 * flight-recorder classes). Its default shutdown waits a quiet period of 2 s with a 15 s
 * timeout; {@link #shutdown} waits for no quiet period and at most {@link #SHUTDOWN_TIMEOUT}.
 */
final class LettuceResources {

    /** Longest wait for the client's threads to end at close; commands still in flight are abandoned. */
    static final Duration SHUTDOWN_TIMEOUT = Duration.ofSeconds(1);

    static {
        // Netty's use of sun.misc.Unsafe prints warnings on JDK 25 and is not needed here; Lettuce's
        // JFR events would start the flight recorder's machinery in every process with a remote tier.
        keepOrSet("io.netty.noUnsafe", "true");
        keepOrSet("io.lettuce.core.jfr", "false");
        reactor.core.publisher.Hooks.onErrorDropped(LettuceResources::dropped);
    }

    /**
     * Reactor's word for an error that came after its stream had ended (Lettuce's event bus runs on
     * Reactor). One that only says the client's threads have ended (a {@link RejectedExecutionException},
     * Reactor's "Scheduler unavailable") is the store closing, not a fault: a new user's trial printed
     * it once as an ERROR with its stack after a wrong password had turned the tier off. It goes to
     * DEBUG; any other is logged at ERROR, as Reactor's default does (a bug still shows).
     */
    static void dropped(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof RejectedExecutionException) {
                DROPPED.debug("dropped after the remote client's threads ended: " + t);
                return;
            }
        }
        DROPPED.error("Operator called default onErrorDropped", t);
    }

    /** Where Reactor's default logs a dropped error (slf4j's logger of that name in the CLI). */
    private static final reactor.util.Logger DROPPED = reactor.util.Loggers.getLogger(reactor.core.publisher.Operators.class);

    private LettuceResources() {
    }

    private static void keepOrSet(String property, String value) {
        System.setProperty(property, System.getProperty(property, value));
    }

    /** Called before any Lettuce or Netty class initialises, so that the properties above apply. */
    static void init() {
        // the static initialiser has run
    }

    /**
     * New resources for one client: two I/O threads (Netty opens a selector per thread up front,
     * and Lettuce's default is one per core) and two computation threads
     * (Lettuce's least: fewer are raised to two with a logged line), the JDK's blocking name resolution, no latency
     * metrics. The caller shuts them down ({@link #shutdown}) after the client.
     */
    static ClientResources create() {
        return DefaultClientResources.builder()
                .reconnectDelay(reconnectDelay())
                .ioThreadPoolSize(2)
                .computationThreadPoolSize(2)
                .addressResolverGroup(DefaultAddressResolverGroup.INSTANCE)
                .commandLatencyRecorder(CommandLatencyRecorder.disabled())
                .build();
    }

    /** The longest wait between two reconnection attempts to a store that went away. */
    static final Duration RECONNECT_CAP = Duration.ofSeconds(1);

    /**
     * Lettuce's exponential back-off (1 ms, 2 ms, 4 ms, ...) capped at {@link #RECONNECT_CAP}
     * instead of its default 30 s: after a long outage the store must serve again within about a
     * second of coming back (the breakers already keep a dead store from costing the engine
     * anything), and one connection attempt a second is nothing to a server.
     */
    static Delay reconnectDelay() {
        return Delay.exponential(Duration.ofMillis(1), RECONNECT_CAP, 2, TimeUnit.MILLISECONDS);
    }

    /**
     * Closes {@code client} (its connections, without waiting on the server) and then ends the
     * resources' threads: no quiet period, each step at most {@link #SHUTDOWN_TIMEOUT}, so a
     * frozen server cannot hold a process's exit. Never throws.
     */
    static void shutdown(AbstractRedisClient client, ClientResources resources) {
        long ms = SHUTDOWN_TIMEOUT.toMillis();
        if (client instanceof RedisClusterClient cluster) {
            // A periodic topology refresh still fetching partitions when the threads below end
            // makes netty log an error with its stack (Lettuce issue 2904): schedule no more of
            // them. One already running is silenced in the CLI's logging configuration.
            // The client is closing: its other options no longer matter.
            cluster.setOptions(ClusterClientOptions.builder()
                    .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder().build()).build());
        }
        // Connections still closing are dropped with the threads; threads that do not end in time
        // are daemons: the process is closing the tier.
        awaitAtMost(client.shutdownAsync(0, ms, TimeUnit.MILLISECONDS), ms);
        awaitAtMost(resources.shutdown(0, ms, TimeUnit.MILLISECONDS), ms);
    }

    /**
     * Waits for {@code first} until {@code wait} has passed since {@code lastSign} (the nano time
     * of the last TCP connection or handshake answered), and at most {@code atMost} + {@code wait}
     * in all; whether it completed (the first connection of {@link LettuceRemoteStore#open}).
     */
    static boolean awaitWhileAlive(java.util.concurrent.CompletableFuture<Void> first, java.util.concurrent.atomic.AtomicLong lastSign,
                                   Duration wait, Duration atMost) {
        long end = System.nanoTime() + atMost.plus(wait).toNanos();
        while (!first.isDone()) {
            long now = System.nanoTime();
            long left = Math.min(lastSign.get() + wait.toNanos() - now, end - now);
            if (left <= 0 || !awaitAtMost(first, Math.max(1, Math.min(left / 1_000_000, 100)))
                    && Thread.currentThread().isInterrupted()) {
                return first.isDone();
            }
        }
        return true;
    }

    /**
     * Whether {@code f} completed (normally or not) within {@code ms} milliseconds; false when
     * interrupted (the caller is stopping; the interrupt is kept). Never throws.
     */
    static boolean awaitAtMost(Future<?> f, long ms) {
        try {
            f.get(ms, TimeUnit.MILLISECONDS);
            return true;
        } catch (TimeoutException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } catch (ExecutionException | CancellationException e) {
            return true;
        }
    }
}

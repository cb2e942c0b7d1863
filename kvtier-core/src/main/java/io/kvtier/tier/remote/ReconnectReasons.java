package io.kvtier.tier.remote;

import io.lettuce.core.event.connection.ConnectionActivatedEvent;
import io.lettuce.core.event.connection.ReconnectFailedEvent;
import io.lettuce.core.resource.ClientResources;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Why a lost connection is still down, in the outage's line. A command on a connection Lettuce
 * is re-establishing fails with Lettuce's "Currently not connected. Commands are rejected.",
 * which says nothing of the server; its reconnection attempts (every 1 ms to 1 s) say why: a
 * killed server refuses them. So the last failed attempt's reason is kept per server address
 * ({@code host:port}, from the client's event bus, forgotten when a connection is up again) and
 * stands in for Lettuce's words.
 */
final class ReconnectReasons implements AutoCloseable {

    /** Lettuce's message for a command on a connection that is down (REJECT_COMMANDS). */
    static final String NOT_CONNECTED = "Currently not connected";

    private final Map<String, String> last = new ConcurrentHashMap<>();
    /** Lines waiting for an address's next failed reconnection. */
    private final Map<String, CompletableFuture<String>> next = new ConcurrentHashMap<>();
    private final reactor.core.Disposable subscription;

    ReconnectReasons(ClientResources resources) {
        subscription = resources.eventBus().get().subscribe(e -> {
            if (e instanceof ReconnectFailedEvent f && f.remoteAddress() != null) {
                String a = address(f.remoteAddress());
                String reason = RemoteErrors.reasonOf(f.getCause());
                last.put(a, reason);
                CompletableFuture<String> waiting = next.remove(a);
                if (waiting != null) {
                    waiting.complete(reason);
                }
            } else if (e instanceof ConnectionActivatedEvent c && c.remoteAddress() != null) {
                last.remove(address(c.remoteAddress())); // an outage's reason is no later outage's
            }
        });
    }

    /**
     * The reason of {@code err} on the server at {@code address} ({@code host:port}, null when
     * unknown) for a line: {@link RemoteErrors#reasonOf}, except that Lettuce's "not connected"
     * becomes {@link #words} of the last failed reconnection. When none has failed yet (the line's
     * failures came within a millisecond or two of the connection's loss), the answer comes when
     * one does, or after {@code waitMillis} as "not connected".
     */
    CompletableFuture<String> reasonOf(String address, Throwable err, long waitMillis) {
        String reason = RemoteErrors.reasonOf(err);
        if (!reason.startsWith(NOT_CONNECTED) || address == null) {
            return CompletableFuture.completedFuture(reason.startsWith(NOT_CONNECTED) ? "not connected" : reason);
        }
        String known = last.get(address);
        if (known != null) {
            return CompletableFuture.completedFuture(words(known));
        }
        CompletableFuture<String> waiting = next.computeIfAbsent(address, a -> new CompletableFuture<>());
        String raced = last.get(address); // a failure recorded between the look-up and the wait
        if (raced != null) {
            waiting.complete(raced);
        }
        return waiting.copy().completeOnTimeout(null, waitMillis, TimeUnit.MILLISECONDS)
                .thenApply(r -> r == null ? "not connected" : words(r));
    }

    /** A failed reconnection's reason in the line's words: a refusal is "connection refused". */
    static String words(String reconnectReason) {
        return reconnectReason.startsWith("connection refused") ? "connection refused" : "not connected (" + reconnectReason + ")";
    }

    /** {@code host:port} of a socket address, as the store names its servers; its text otherwise. */
    static String address(SocketAddress a) {
        return a instanceof InetSocketAddress i ? i.getHostString() + ":" + i.getPort() : String.valueOf(a);
    }

    /**
     * Also answers every line still waiting, "not connected": the store closes, so no failed
     * reconnection will come, and a line left waiting was said after the run's summary or lost
     * with the JVM (RemoteTierTest's killed server, its "stopped answering" line missing under load).
     */
    @Override
    public void close() {
        subscription.dispose();
        next.values().forEach(waiting -> waiting.complete(null));
        next.clear();
    }
}

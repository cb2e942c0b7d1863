package io.kvtier.tier.remote;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandInterruptedException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisLoadingException;
import io.lettuce.core.protocol.RedisProtocolException;
import java.io.IOException;
import java.util.Locale;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;

/**
 * Why a remote operation failed, as the stats count it.
 */
public final class RemoteFailure extends RuntimeException {

    /** Cause of a failed operation. */
    public enum Cause {
        /** No answer within the deadline (a frozen or overloaded server). */
        TIMEOUT,
        /**
         * Not sent or not answered because there was no working connection: the node's breaker
         * is open, the tier is off, the client is disconnected or the connection closed under
         * the command (a killed server), or the server said it cannot serve now (loading,
         * cluster down, failover in progress).
         */
        UNAVAILABLE,
        /** The server answered with an error, or the client failed otherwise (a bug to look at). */
        ERROR;

        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** Error replies of a server that is up but cannot serve the key now (a failover, a restart). */
    private static final String[] UNAVAILABLE_REPLIES = {"LOADING", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN", "BUSY"};

    private final Cause cause;

    public RemoteFailure(Cause cause, String message) {
        super(message, null, false, false);
        this.cause = cause;
    }

    public Cause kind() {
        return cause;
    }

    /**
     * The cause of a throwable from a remote future, by its whole kind (unwrapping completion
     * wrappers, then the first cause in the chain that tells):
     * <ul>
     *   <li>{@link Cause#TIMEOUT}: Lettuce's command timeout, a {@link TimeoutException};</li>
     *   <li>{@link Cause#UNAVAILABLE}: no connection: a connect failure, an I/O error of the
     *       socket (reset, closed, refused: a server killed under a command), Lettuce's own
     *       client-state errors (not connected, connection closed, no node for the slot), and
     *       the server's "cannot serve now" replies (LOADING, MASTERDOWN, CLUSTERDOWN, TRYAGAIN,
     *       BUSY);</li>
     *   <li>{@link Cause#ERROR}: any other error reply (OOM, NOPERM, WRONGTYPE...), a protocol
     *       error, an interruption, or anything else.</li>
     * </ul>
     */
    public static Cause causeOf(Throwable t) {
        Throwable c = tellingCause(t);
        return c == null ? Cause.ERROR : kindOf(c);
    }

    /**
     * Whether {@code t} is, by {@link #causeOf}'s reading, the server's error reply (an
     * {@link Cause#ERROR} that the server sent, as OOM or WRONGTYPE): the server answered.
     */
    public static boolean isErrorReply(Throwable t) {
        Throwable c = tellingCause(t);
        return c instanceof RedisCommandExecutionException && kindOf(c) == Cause.ERROR;
    }

    /**
     * Whether {@code t} is the caller's own cancellation (a SET whose memory its job took back
     * before it was sent, {@link RemoteStore#setFrom}): no sign of the store's health, so no
     * breaker counts it.
     */
    public static boolean isCancelled(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof java.util.concurrent.CancellationException) {
                return true;
            }
        }
        return false;
    }

    /** The first throwable in {@code t}'s chain whose own kind tells ({@link #kindOf}), or null. */
    private static Throwable tellingCause(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (kindOf(c) != null) {
                return c;
            }
        }
        return null;
    }

    /** The cause {@code t} itself tells, or null to look at its cause. */
    private static Cause kindOf(Throwable t) {
        return switch (t) {
            case RemoteFailure f -> f.kind();
            case CompletionException w -> null;
            case ExecutionException w -> null;
            case RedisCommandTimeoutException x -> Cause.TIMEOUT;
            case TimeoutException x -> Cause.TIMEOUT;
            case RedisConnectionException x -> Cause.UNAVAILABLE;
            case IOException x -> Cause.UNAVAILABLE;
            case RedisLoadingException x -> Cause.UNAVAILABLE;
            case RedisCommandExecutionException x -> unavailableReply(x.getMessage()) ? Cause.UNAVAILABLE : Cause.ERROR;
            case RedisProtocolException x -> Cause.ERROR;
            case RedisCommandInterruptedException x -> Cause.ERROR;
            // Lettuce's other exceptions name the client's connection state: "Currently not
            // connected", "Connection closed", "Connection is closed", no partition for a slot.
            // One wrapping an I/O error says so through its cause.
            case RedisException x -> x.getCause() != null && x.getCause() != x ? null : Cause.UNAVAILABLE;
            default -> null;
        };
    }

    private static boolean unavailableReply(String message) {
        if (message != null) {
            for (String prefix : UNAVAILABLE_REPLIES) {
                if (message.startsWith(prefix)) {
                    return true;
                }
            }
        }
        return false;
    }
}

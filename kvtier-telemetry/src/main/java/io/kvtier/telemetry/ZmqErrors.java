package io.kvtier.telemetry;

import java.util.Locale;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMQException;

/**
 * Words for JeroMQ's failures. JeroMQ reports a socket error as "Errno N" with its own numbering
 * (BSD/macOS numbers: 48 is "address already in use" there, 98 on Linux), which names nothing
 * a user can act on; this turns the number into its description.
 */
public final class ZmqErrors {

    private static final System.Logger LOG = System.getLogger(ZmqErrors.class.getName());

    private ZmqErrors() {
    }

    /**
     * A JeroMQ context whose I/O threads report their failures to the log, not as a stack trace on
     * stderr (JeroMQ's default): closing a context races its I/O threads' mailboxes, so a
     * {@code ClosedChannelException} at exit was printed whole to a user's terminal for nothing.
     * Those notifications go to DEBUG; a JeroMQ thread that dies is one WARNING line. Create every
     * socket after this (an I/O thread takes the handlers when it starts).
     */
    public static ZContext context() {
        ZContext ctx = new ZContext();
        ctx.setNotificationExceptionHandler((thread, e) -> LOG.log(System.Logger.Level.DEBUG,
                () -> "JeroMQ " + thread.getName() + ": " + e, e));
        ctx.setUncaughtExceptionHandler((thread, e) -> LOG.log(System.Logger.Level.WARNING,
                "JeroMQ thread " + thread.getName() + " stopped: " + e));
        return ctx;
    }

    /**
     * A lower-case description of {@code e}: for a {@link ZMQException} the description of its
     * error code (e.g. "address already in use"), otherwise the exception's message.
     */
    public static String describe(RuntimeException e) {
        if (e instanceof ZMQException z) {
            try {
                return ZMQ.Error.findByCode(z.getErrorCode()).getMessage().toLowerCase(Locale.ROOT);
            } catch (IllegalArgumentException unknown) {
                return "error " + z.getErrorCode();
            }
        }
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }
}

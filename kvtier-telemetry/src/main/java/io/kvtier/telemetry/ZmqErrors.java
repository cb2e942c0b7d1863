package io.kvtier.telemetry;

import java.util.Locale;
import org.zeromq.ZMQ;
import org.zeromq.ZMQException;

/**
 * Words for JeroMQ's failures. JeroMQ reports a socket error as "Errno N" with its own numbering
 * (BSD/macOS numbers: 48 is "address already in use" there, 98 on Linux), which names nothing
 * a user can act on; this turns the number into its description.
 */
public final class ZmqErrors {

    private ZmqErrors() {
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

package io.kvtier.tier.remote;

/**
 * Why a remote operation failed, as the stats count it.
 */
public final class RemoteFailure extends RuntimeException {

    /** Cause of a failed operation. */
    public enum Cause {
        /** No answer within the deadline (a frozen or overloaded server). */
        TIMEOUT,
        /** Not sent: the node's breaker is open, the tier is off, or the client is disconnected. */
        UNAVAILABLE,
        /** The server answered with an error. */
        ERROR;

        public String label() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    private final Cause cause;

    public RemoteFailure(Cause cause, String message) {
        super(message, null, false, false);
        this.cause = cause;
    }

    public Cause kind() {
        return cause;
    }

    /** The cause of a throwable from a remote future (unwrapping completion wrappers). */
    public static Cause causeOf(Throwable t) {
        while (t instanceof java.util.concurrent.CompletionException || t instanceof java.util.concurrent.ExecutionException) {
            if (t.getCause() == null) {
                break;
            }
            t = t.getCause();
        }
        return t instanceof RemoteFailure f ? f.kind() : Cause.ERROR;
    }
}

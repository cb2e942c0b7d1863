package io.kvtier.server;

/** The engine loop did not take a request; {@link #reason()} says why (the front end maps it to a status). */
public final class Rejected extends Exception {

    /** Why a request was not taken. */
    public enum Reason {
        /** The waiting queue is full: retry later (HTTP 429). */
        QUEUE_FULL,
        /** The server is shutting down (HTTP 503). */
        STOPPING,
        /** The engine thread has died (HTTP 503). */
        ENGINE_DEAD
    }

    private final Reason reason;

    public Rejected(Reason reason, String message) {
        super(message);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }
}

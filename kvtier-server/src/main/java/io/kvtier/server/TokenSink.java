package io.kvtier.server;

/**
 * Where the engine loop sends one request's output. Every method is called on the engine thread,
 * in order: any number of {@link #onTokens}, then exactly one of {@link #onFinished} or
 * {@link #onFailed}. Implementations must not block (hand the data to the I/O thread, e.g.
 * through a queue): a slow client must never stall the engine.
 */
public interface TokenSink {

    /** Token ids generated since the last call (at least one; never the stop token). */
    void onTokens(int[] ids);

    /** The request ended normally or was aborted ({@link Outcome#reason()} says which). */
    void onFinished(Outcome outcome);

    /** The engine failed or shut down before the request ended; {@code message} says why. */
    void onFailed(String message);
}

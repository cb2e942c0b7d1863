package io.kvtier.server;

import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A {@link TokenSink} that hands the engine thread's calls to the request's I/O thread through a
 * queue: the engine never waits for a client. Unbounded, but a request's events are bounded by
 * its max tokens (one event per step at most).
 */
final class RequestStream implements TokenSink {

    /** What the I/O thread takes: new tokens, the end, or a failure. */
    sealed interface Event {
    }

    record Tokens(int[] ids) implements Event {
    }

    record Finished(Outcome outcome) implements Event {
    }

    record Failed(String message) implements Event {
    }

    private final LinkedBlockingQueue<Event> events = new LinkedBlockingQueue<>();

    @Override
    public void onTokens(int[] ids) {
        events.add(new Tokens(ids));
    }

    @Override
    public void onFinished(Outcome outcome) {
        events.add(new Finished(outcome));
    }

    @Override
    public void onFailed(String message) {
        events.add(new Failed(message));
    }

    /** The next event, waiting at most {@code millis}; null on timeout. */
    Event next(long millis) throws InterruptedException {
        return events.poll(millis, TimeUnit.MILLISECONDS);
    }
}

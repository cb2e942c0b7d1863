package io.kvtier.server;

import com.sun.net.httpserver.HttpExchange;
import io.kvtier.engine.Engine;
import io.kvtier.engine.FinishReason;
import io.kvtier.engine.Request;
import io.kvtier.telemetry.KvEventPublisher;
import io.kvtier.telemetry.ServeMetrics;
import io.kvtier.tier.KvEvents;
import java.io.IOException;
import java.util.List;
import java.util.Objects;

/**
 * Connects the server to its telemetry: after every turn of the {@link EngineLoop} (engine thread)
 * it hands the engine's {@link Engine#snapshot() snapshot} to the {@link ServeMetrics} and the KV
 * events emitted since the last turn to the {@link KvEventPublisher}; it times every request from
 * its arrival through its sink; it serves {@code GET /metrics}.
 */
public final class ServerTelemetry implements EngineLoop.StepListener, AutoCloseable {

    private final ServeMetrics metrics;
    private final KvEvents events;
    private final KvEventPublisher publisher;

    /**
     * @param metrics   the metrics (built on the engine's first snapshot)
     * @param events    the buffered {@link KvEvents} the engine was built with, or null
     * @param publisher where the events go, or null (then {@code events} must be null too)
     */
    public ServerTelemetry(ServeMetrics metrics, KvEvents events, KvEventPublisher publisher) {
        if ((events == null) != (publisher == null)) {
            throw new IllegalArgumentException("KV events need both a buffered KvEvents and a publisher");
        }
        this.metrics = Objects.requireNonNull(metrics, "metrics");
        this.events = events;
        this.publisher = publisher;
    }

    /** Listens to {@code loop}, times its requests and serves {@code /metrics} on {@code server} (before they start). */
    public void install(EngineLoop loop, OpenAiServer server) {
        loop.addStepListener(this);
        loop.setSinkDecorator(sink -> new TimedSink(sink, metrics.startRequest()));
        server.setMetricsHandler(this::serveMetrics);
    }

    @Override
    public void onStep(Engine engine, List<Request> finished) {
        metrics.update(engine.snapshot());
        if (publisher != null) {
            List<io.kvtier.tier.KvEvent> batch = events.drain();
            if (!batch.isEmpty()) {
                publisher.publish(batch);
            }
        }
    }

    private void serveMetrics(HttpExchange ex) throws IOException {
        HttpIo.body(ex, 200, metrics.contentType(), metrics.scrape());
    }

    /** The KV event publisher, or null. */
    public KvEventPublisher publisher() {
        return publisher;
    }

    public ServeMetrics metrics() {
        return metrics;
    }

    /** Stops the publisher (its queued batches are sent first). */
    @Override
    public void close() {
        if (publisher != null) {
            publisher.close();
        }
    }

    /** Observes a request's latencies on its way out; delivery itself is unchanged. */
    private record TimedSink(TokenSink inner, ServeMetrics.RequestTimer timer) implements TokenSink {
        @Override
        public void onTokens(int[] ids) {
            timer.token();
            inner.onTokens(ids);
        }

        @Override
        public void onFinished(Outcome outcome) {
            if (outcome.reason() != FinishReason.ABORT) {
                timer.finish(); // vLLM's end-to-end latency covers requests that completed
            }
            inner.onFinished(outcome);
        }

        @Override
        public void onFailed(String message) {
            inner.onFailed(message);
        }
    }
}

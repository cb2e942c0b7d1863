package io.kvtier.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import io.kvtier.engine.FinishReason;
import java.io.IOException;
import java.util.Arrays;
import java.util.UUID;

/**
 * {@code POST /v1/completions} and {@code POST /v1/chat/completions}: submits the request to the
 * engine loop and answers with one JSON body or a stream of server-sent events. A streaming
 * client that goes away aborts its request at the engine's next step: a streaming one noticed by a
 * failed write, a non-streaming one by probing its connection ({@link ClientWatch}). Stop strings
 * end the request in the engine ({@link StopStrings}), so the finish reason of the response and of
 * the metrics is the engine's one decision ({@link Outcome#reason()}).
 */
final class CompletionHandler {

    /** How long the I/O thread waits for an event before it checks again (no timing logic depends on it). */
    private static final long WAIT_MILLIS = 1000;
    /**
     * A non-streaming request's wait between two probes of its connection while no token arrives
     * (queued, loading: it holds no device block yet, so a slower probe costs nothing); while it
     * generates, the connection is probed after every step's tokens.
     */
    private static final long PROBE_MILLIS = 200;

    private final ServerConfig config;
    private final EngineLoop loop;
    private final ModelText model;
    private final RequestParser parser;

    CompletionHandler(ServerConfig config, EngineLoop loop, ModelText model, RequestParser parser) {
        this.config = config;
        this.loop = loop;
        this.model = model;
        this.parser = parser;
    }

    void handle(HttpExchange ex, JsonNode body, boolean chat) throws IOException, ApiError, InterruptedException {
        CompletionParams p = parser.parse(body, chat);
        RequestStream sink = new RequestStream();
        long id = submit(p, sink);
        Responses shapes = new Responses(chat, (chat ? "chatcmpl-" : "cmpl-") + UUID.randomUUID().toString().replace("-", ""),
                model.modelName());
        TextStreamer text = new TextStreamer(model, p.stop(), p.promptIds()[p.promptIds().length - 1]);
        boolean done = false;
        try {
            if (p.stream()) {
                stream(ex, p, id, sink, shapes, text);
            } else {
                whole(ex, p, id, sink, shapes, text);
            }
            done = true;
        } finally {
            if (!done) {
                loop.abort(id); // the client went away or the thread was interrupted: free the request's blocks
            }
        }
    }

    private long submit(CompletionParams p, RequestStream sink) throws ApiError {
        try {
            return loop.submit(p.generation(model), sink);
        } catch (Rejected r) {
            throw switch (r.reason()) {
                case QUEUE_FULL -> ApiError.queueFull(r.getMessage());
                case STOPPING, ENGINE_DEAD -> ApiError.unavailable(r.getMessage());
            };
        } catch (IllegalArgumentException e) {
            throw ApiError.badRequest(e.getMessage(), "max_tokens");
        }
    }

    private void whole(HttpExchange ex, CompletionParams p, long id, RequestStream sink, Responses shapes, TextStreamer text)
            throws IOException, ApiError, InterruptedException {
        StringBuilder out = new StringBuilder();
        int[] ids = new int[0];
        ClientWatch client = new ClientWatch(ex);
        while (true) {
            RequestStream.Event e = sink.next(client.available() ? PROBE_MILLIS : WAIT_MILLIS);
            if (!(e instanceof RequestStream.Finished) && client.gone()) {
                // Nothing was written yet, so no write can fail: the probe is how a departed client is noticed.
                throw new IOException("the client closed its connection before the response");
            }
            switch (e) {
                case null -> { }
                case RequestStream.Tokens t -> {
                    out.append(text.accept(t.ids()));
                    ids = concat(ids, t.ids());
                }
                case RequestStream.Failed f -> throw ApiError.internal(f.message());
                case RequestStream.Finished f -> {
                    if (f.outcome().reason() == FinishReason.ABORT) {
                        throw ApiError.unavailable("the request was aborted: the server is shutting down");
                    }
                    out.append(text.finish());
                    if (client.mustClose()) {
                        ex.getResponseHeaders().set("Connection", "close");
                    }
                    HttpIo.json(ex, 200, shapes.full(out.toString(), f.outcome().reason().wireName(), usage(f.outcome()),
                            p.promptIds(), p.returnTokenIds() ? ids : null));
                    return;
                }
            }
        }
    }

    private void stream(HttpExchange ex, CompletionParams p, long id, RequestStream sink, Responses shapes, TextStreamer text)
            throws IOException, InterruptedException {
        SseWriter sse = new SseWriter(ex);
        int[] promptIds = p.returnTokenIds() ? p.promptIds() : null; // in the first chunk only
        if (p.chat()) {
            sse.data(shapes.chunk("", true, null, null, promptIds));
            promptIds = null;
        }
        boolean injectFault = config.testOnlyStreamFaultUser() != null && config.testOnlyStreamFaultUser().equals(p.user());
        while (true) {
            RequestStream.Event e = sink.next(WAIT_MILLIS);
            switch (e) {
                case null -> { }
                case RequestStream.Tokens t -> {
                    String delta = text.accept(t.ids());
                    if (!delta.isEmpty() || p.returnTokenIds()) {
                        sse.data(shapes.chunk(delta, false, null, p.returnTokenIds() ? t.ids() : null, promptIds));
                        promptIds = null;
                    }
                    if (injectFault) {
                        loop.abort(id);
                        sse.error(ApiError.internal("TEST ONLY: injected mid-stream failure (testOnlyStreamFaultUser)"));
                        return;
                    }
                }
                case RequestStream.Failed f -> {
                    sse.error(ApiError.internal(f.message()));
                    return;
                }
                case RequestStream.Finished f -> {
                    if (f.outcome().reason() == FinishReason.ABORT) {
                        sse.error(ApiError.unavailable("the request was aborted: the server is shutting down"));
                        return;
                    }
                    String rest = text.finish();
                    sse.data(shapes.chunk(rest, false, f.outcome().reason().wireName(), null, promptIds));
                    if (p.includeUsage()) {
                        sse.data(shapes.usageChunk(usage(f.outcome())));
                    }
                    sse.done();
                    return;
                }
            }
        }
    }

    /** Completion tokens up to and including the one that completed a stop string (the engine stopped there). */
    private static Responses.Usage usage(Outcome o) {
        return new Responses.Usage(o.promptTokens(), o.completionTokens(), o.cachedTokens());
    }

    private static int[] concat(int[] a, int[] b) {
        int[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}

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
 * client that goes away (a failed write) aborts its request at the engine's next step; a request
 * cut by a stop string is aborted the same way once its text has been sent.
 */
final class CompletionHandler {

    /** How long the I/O thread waits for an event before it checks again (no timing logic depends on it). */
    private static final long WAIT_MILLIS = 1000;

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
            return loop.submit(p.generation(), sink);
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
        while (true) {
            RequestStream.Event e = sink.next(WAIT_MILLIS);
            switch (e) {
                case null -> { }
                case RequestStream.Tokens t -> {
                    boolean wasStopped = text.stopped();
                    out.append(text.accept(t.ids()));
                    ids = concat(ids, t.ids());
                    if (text.stopped() && !wasStopped) {
                        loop.abort(id);
                    }
                }
                case RequestStream.Failed f -> throw ApiError.internal(f.message());
                case RequestStream.Finished f -> {
                    if (f.outcome().reason() == FinishReason.ABORT && !text.stopped()) {
                        throw ApiError.unavailable("the request was aborted: the server is shutting down");
                    }
                    String reason = finishReason(f.outcome(), text);
                    out.append(text.finish());
                    Responses.Usage usage = usage(f.outcome(), text);
                    int[] used = Arrays.copyOf(ids, usage.completionTokens());
                    HttpIo.json(ex, 200, shapes.full(out.toString(), reason, usage, p.promptIds(), p.returnTokenIds() ? used : null));
                    return;
                }
            }
        }
    }

    private void stream(HttpExchange ex, CompletionParams p, long id, RequestStream sink, Responses shapes, TextStreamer text)
            throws IOException, InterruptedException {
        SseWriter sse = new SseWriter(ex);
        if (p.chat()) {
            sse.data(shapes.chunk("", true, null, null));
        }
        boolean injectFault = config.testOnlyStreamFaultUser() != null && config.testOnlyStreamFaultUser().equals(p.user());
        while (true) {
            RequestStream.Event e = sink.next(WAIT_MILLIS);
            switch (e) {
                case null -> { }
                case RequestStream.Tokens t -> {
                    if (text.stopped()) {
                        continue; // tokens of the step that was running when the stop string was found
                    }
                    String delta = text.accept(t.ids());
                    if (!delta.isEmpty() || p.returnTokenIds()) {
                        sse.data(shapes.chunk(delta, false, null, p.returnTokenIds() ? t.ids() : null));
                    }
                    if (text.stopped()) {
                        loop.abort(id);
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
                    if (f.outcome().reason() == FinishReason.ABORT && !text.stopped()) {
                        sse.error(ApiError.unavailable("the request was aborted: the server is shutting down"));
                        return;
                    }
                    String reason = finishReason(f.outcome(), text);
                    String rest = text.finish();
                    sse.data(shapes.chunk(rest, false, reason, null));
                    if (p.includeUsage()) {
                        sse.data(shapes.usageChunk(usage(f.outcome(), text)));
                    }
                    sse.done();
                    return;
                }
            }
        }
    }

    /** stop (the stop token or a stop string) or length; callers answer an abort that was not theirs before. */
    private static String finishReason(Outcome o, TextStreamer text) {
        return text.stopped() ? "stop" : switch (o.reason()) {
            case STOP -> "stop";
            case LENGTH -> "length";
            case ABORT -> "abort";
        };
    }

    private static Responses.Usage usage(Outcome o, TextStreamer text) {
        int completion = text.stopped() ? Math.min(text.tokensUsed(), o.completionTokens()) : o.completionTokens();
        return new Responses.Usage(o.promptTokens(), completion, o.cachedTokens());
    }

    private static int[] concat(int[] a, int[] b) {
        int[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}

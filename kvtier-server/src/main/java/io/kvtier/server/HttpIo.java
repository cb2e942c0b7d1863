package io.kvtier.server;

import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.OutputStream;

/** Whole JSON responses and OpenAI error responses. */
final class HttpIo {

    private HttpIo() {
    }

    static void json(HttpExchange ex, int status, Object node) throws IOException {
        body(ex, status, "application/json", Json.bytes(node));
    }

    /**
     * A whole body; to a HEAD request the same headers and no body (the JDK's server takes a HEAD
     * response's length only as a header: passed as the length, it warns and sends none).
     */
    static void body(HttpExchange ex, int status, String contentType, byte[] body) throws IOException {
        ex.getResponseHeaders().set("Content-Type", contentType);
        if ("HEAD".equals(ex.getRequestMethod())) {
            ex.getResponseHeaders().set("Content-Length", Integer.toString(body.length));
            ex.sendResponseHeaders(status, -1);
            return;
        }
        ex.sendResponseHeaders(status, body.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(body);
        }
    }

    /** The error object with its status, {@code x-should-retry: false} when a retry cannot help, and {@code Retry-After}. */
    static void error(HttpExchange ex, ApiError e) throws IOException {
        if (!e.retryable()) {
            ex.getResponseHeaders().set("x-should-retry", "false");
        }
        if (e.retryAfterSeconds() > 0) {
            ex.getResponseHeaders().set("Retry-After", Integer.toString(e.retryAfterSeconds()));
        }
        if (e.allow() != null) {
            ex.getResponseHeaders().set("Allow", e.allow());
        }
        if (e.status() == 413) {
            ex.getResponseHeaders().set("Connection", "close"); // the unread rest of the body is not drained
        }
        json(ex, e.status(), Json.error(e));
    }
}

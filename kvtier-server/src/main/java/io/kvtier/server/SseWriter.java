package io.kvtier.server;

import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Server-sent events on an exchange: headers go out at once (chunked), each event is flushed as
 * it is written. An {@link IOException} from a write means the client went away.
 */
final class SseWriter {

    private static final byte[] DONE = "data: [DONE]\n\n".getBytes(StandardCharsets.US_ASCII);

    private final OutputStream out;

    /** Sends the 200 and the event-stream headers now. */
    SseWriter(HttpExchange ex) throws IOException {
        ex.getResponseHeaders().set("Content-Type", "text/event-stream; charset=utf-8");
        ex.getResponseHeaders().set("Cache-Control", "no-cache");
        ex.getResponseHeaders().set("X-Accel-Buffering", "no");
        ex.sendResponseHeaders(200, 0);
        this.out = ex.getResponseBody();
        out.flush();
    }

    /** {@code data: <json>} */
    void data(Object json) throws IOException {
        out.write("data: ".getBytes(StandardCharsets.US_ASCII));
        out.write(Json.bytes(json));
        out.write('\n');
        out.write('\n');
        out.flush();
    }

    /** {@code event: error} with OpenAI's error object: the stream ends after it. */
    void error(ApiError e) throws IOException {
        out.write("event: error\ndata: ".getBytes(StandardCharsets.US_ASCII));
        out.write(Json.bytes(Json.error(e)));
        out.write('\n');
        out.write('\n');
        out.flush();
    }

    /** {@code data: [DONE]} */
    void done() throws IOException {
        out.write(DONE);
        out.flush();
    }
}

package io.kvtier.server;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;

/**
 * Reads a JSON request body with a bound: a body over the limit is refused (413) after reading at
 * most limit + 1 bytes, never buffered whole; the rest is left unread and the connection closed.
 */
final class BodyReader {

    private BodyReader() {
    }

    /**
     * @return the body as a JSON object
     * @throws ApiError 413 over {@code maxBytes}; 400 for malformed JSON or a non-object
     */
    static JsonNode readObject(HttpExchange ex, long maxBytes) throws ApiError, IOException {
        String length = ex.getRequestHeaders().getFirst("Content-Length");
        if (length != null) {
            try {
                if (Long.parseLong(length.trim()) > maxBytes) {
                    throw ApiError.tooLarge(maxBytes);
                }
            } catch (NumberFormatException e) {
                throw ApiError.badRequest("bad Content-Length header '" + length + "'", null);
            }
        }
        byte[] body = readBounded(ex.getRequestBody(), maxBytes);
        if (body.length == 0) {
            throw ApiError.badRequest("empty request body: a JSON object is expected", null);
        }
        JsonNode node;
        try {
            node = Json.MAPPER.readTree(body);
        } catch (JsonProcessingException e) {
            throw ApiError.badRequest("malformed JSON in the request body: " + jsonProblem(e), null);
        }
        if (node == null || !node.isObject()) {
            throw ApiError.badRequest("the request body must be a JSON object", null);
        }
        return node;
    }

    /**
     * Jackson's message without its source-location text ("[Source: REDACTED (...); line: 1, column: 27]"
     * becomes "line 1, column 27") and its configuration advice, followed by where the parser stopped.
     */
    static String jsonProblem(JsonProcessingException e) {
        String what = e.getOriginalMessage().startsWith("Trailing token") ? "text after the JSON object"
                : e.getOriginalMessage().replaceAll("\\[Source: [^;]*; line: (\\d+), column: (\\d+)\\]", "line $1, column $2")
                        // Jackson's advice to its own users ("enable `JsonReadFeature.X` to allow") is not the client's
                        .replaceAll("[:;,]?\\s*\\(?(?:or )?enable `[^`]+`[^)\\n]*\\)?", "");
        var at = e.getLocation();
        return at == null || at.getLineNr() < 1 ? what : what + " (at line " + at.getLineNr() + ", column " + at.getColumnNr() + ")";
    }

    private static byte[] readBounded(InputStream in, long maxBytes) throws ApiError, IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buf = new byte[8192];
        long total = 0;
        for (int n; (n = in.read(buf)) > 0; ) {
            total += n;
            if (total > maxBytes) {
                throw ApiError.tooLarge(maxBytes);
            }
            out.write(buf, 0, n);
        }
        return out.toByteArray();
    }
}

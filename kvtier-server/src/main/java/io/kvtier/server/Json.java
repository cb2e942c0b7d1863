package io.kvtier.server;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

/** The server's one Jackson mapper (thread-safe) and the OpenAI error object. */
final class Json {

    static final ObjectMapper MAPPER = new ObjectMapper();

    private Json() {
    }

    static ObjectNode object() {
        return MAPPER.createObjectNode();
    }

    /** {@code {"error": {"message", "type", "param", "code"}}}. */
    static ObjectNode error(ApiError e) {
        ObjectNode root = object();
        ObjectNode err = root.putObject("error");
        err.put("message", e.getMessage());
        err.put("type", e.type());
        err.put("param", e.param());
        err.put("code", e.code());
        return root;
    }

    static byte[] bytes(Object node) {
        try {
            return MAPPER.writeValueAsBytes(node);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException("cannot serialize a JSON tree (a bug)", e);
        }
    }
}

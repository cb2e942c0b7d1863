package io.kvtier.server;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

/** The server's one Jackson mapper (thread-safe) and the OpenAI error object. */
final class Json {

    /**
     * Strict where a lenient reading would guess: text after the object ({@code {...} trailing})
     * and a key given twice (which value counts?) are malformed JSON, as the OpenAI API has it.
     */
    static final ObjectMapper MAPPER = com.fasterxml.jackson.databind.json.JsonMapper.builder()
            .enable(com.fasterxml.jackson.databind.DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(com.fasterxml.jackson.core.StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .build();

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

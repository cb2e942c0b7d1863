package io.kvtier.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

/**
 * An assistant's tool-call arguments reach the chat template as vLLM and llama.cpp pass them: the
 * OpenAI JSON string turned into its object (a new user's trial: Llama 3 rendered
 * {@code "parameters": "{\"city\":\"Paris\"}"}), anything else as sent.
 */
class ToolCallArgumentsTest {

    @Test
    void argumentsInAJsonStringBecomeTheirObjectOthersStayAsSent() throws Exception {
        JsonNode calls = Json.MAPPER.readTree("[{\"id\": \"c1\", \"type\": \"function\", \"function\": {\"name\": \"get_w\","
                + " \"arguments\": \"{\\\"city\\\":\\\"Paris\\\"}\"}},"
                + " {\"id\": \"c2\", \"type\": \"function\", \"function\": {\"name\": \"f\", \"arguments\": \"not json\"}},"
                + " {\"id\": \"c3\", \"type\": \"function\", \"function\": {\"name\": \"g\", \"arguments\": \"[1, 2]\"}},"
                + " {\"id\": \"c4\", \"type\": \"function\", \"function\": {\"name\": \"h\", \"arguments\": {\"x\": 1}}}]");
        String before = calls.toString();
        assertThat(RequestParser.argumentsAsObjects(calls).toString()).isEqualTo("[{\"id\":\"c1\",\"type\":\"function\","
                + "\"function\":{\"name\":\"get_w\",\"arguments\":{\"city\":\"Paris\"}}},"
                + "{\"id\":\"c2\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"not json\"}},"
                + "{\"id\":\"c3\",\"type\":\"function\",\"function\":{\"name\":\"g\",\"arguments\":\"[1, 2]\"}},"
                + "{\"id\":\"c4\",\"type\":\"function\",\"function\":{\"name\":\"h\",\"arguments\":{\"x\":1}}}]");
        assertThat(calls.toString()).as("the request itself is not changed").isEqualTo(before);
    }
}

package io.kvtier.model.chat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvtier.engine.ReferenceRecords;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** The chat records of llama.cpp's references in {@code ../shared/models/gguf-ref/} (one per model file). */
public final class ChatReferences {

    private static final ObjectMapper JSON = new ObjectMapper();

    private ChatReferences() {
    }

    /** A file of {@code ../shared/models/gguf-ref/}. */
    public static Path ref(String name) {
        return ReferenceRecords.shared().resolve("models/gguf-ref/" + name);
    }

    /** The record whose {@code prompt_kind} is {@code chat} (prompt_text, prompt_ids, generated_ids) in {@code refFile}. */
    public static JsonNode chat(String refFile) throws IOException {
        for (String line : Files.readAllLines(ref(refFile))) {
            JsonNode n = JSON.readTree(line);
            if (n.get("prompt_kind").asText().equals("chat")) {
                return n;
            }
        }
        throw new AssertionError("no chat prompt in " + refFile);
    }

    /** A JSON array of ints. */
    public static int[] ints(JsonNode a) {
        int[] out = new int[a.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = a.get(i).asInt();
        }
        return out;
    }
}

package io.kvtier.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Finds the project's {@code shared/} directory and reads its reference records. */
final class SharedFiles {

    private SharedFiles() {
    }

    /** Walks up from {@code user.dir} to the first directory with a {@code shared/models/stories260K.bin}. */
    static Path shared() {
        Path dir = Path.of(System.getProperty("user.dir")).toAbsolutePath();
        for (Path d = dir; d != null; d = d.getParent()) {
            Path candidate = d.resolve("shared");
            if (Files.isRegularFile(candidate.resolve("models/stories260K.bin"))) {
                return candidate;
            }
        }
        throw new IllegalStateException("no shared/models/stories260K.bin above " + dir);
    }

    static Path stories260K() {
        return shared().resolve("models/stories260K.bin");
    }

    static Path tok512() {
        return shared().resolve("models/tok512.bin");
    }

    /** One line of reference/stories260K_greedy.jsonl. */
    record Reference(String prompt, int steps, int[] promptIds, int[] generatedIds, String text) {
    }

    static List<Reference> greedyReferences() {
        ObjectMapper json = new ObjectMapper();
        List<Reference> out = new ArrayList<>();
        try {
            for (String line : Files.readAllLines(shared().resolve("reference/stories260K_greedy.jsonl"))) {
                if (line.isBlank()) continue;
                JsonNode n = json.readTree(line);
                out.add(new Reference(n.get("prompt").asText(), n.get("steps").asInt(), ints(n.get("prompt_ids")),
                        ints(n.get("generated_ids")), n.get("text").asText()));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    private static int[] ints(JsonNode array) {
        int[] out = new int[array.size()];
        for (int i = 0; i < out.length; i++) out[i] = array.get(i).asInt();
        return out;
    }
}

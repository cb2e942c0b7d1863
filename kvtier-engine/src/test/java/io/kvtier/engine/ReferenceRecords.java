package io.kvtier.engine;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The reference C implementation's greedy outputs ({@code shared/reference/stories260K_greedy.jsonl})
 * and the shared model files, found by walking up from the working directory.
 */
public final class ReferenceRecords {

    /** One record: generation ran positions 0..steps-1; {@code generated} ends with 1 when it stopped. */
    public record Record(String prompt, int steps, int[] promptIds, int[] generated, String text) {

        /** Max new tokens that reproduces the record: one token sampled per position from the last prompt one. */
        public int maxTokens() {
            return steps - promptIds.length + 1;
        }

        /** The generated ids less a final stop token 1 (kvtier does not report the stop token). */
        public int[] expectedOutput() {
            int n = generated.length;
            return n > 0 && generated[n - 1] == 1 ? Arrays.copyOf(generated, n - 1) : generated.clone();
        }
    }

    private ReferenceRecords() {
    }

    /** The shared/ directory beside the project root. */
    public static Path shared() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            Path p = dir.resolveSibling("shared");
            if (Files.isRegularFile(p.resolve("models/stories260K.bin"))) {
                return p;
            }
        }
        throw new IllegalStateException("shared/models/stories260K.bin not found above " + Path.of("").toAbsolutePath());
    }

    public static Path model() {
        return shared().resolve("models/stories260K.bin");
    }

    public static Path tokenizer() {
        return shared().resolve("models/tok512.bin");
    }

    public static List<Record> load() {
        ObjectMapper json = new ObjectMapper();
        List<Record> out = new ArrayList<>();
        try {
            for (String line : Files.readAllLines(shared().resolve("reference/stories260K_greedy.jsonl"))) {
                if (line.isBlank()) {
                    continue;
                }
                JsonNode n = json.readTree(line);
                out.add(new Record(n.get("prompt").asText(), n.get("steps").asInt(), ints(n.get("prompt_ids")),
                        ints(n.get("generated_ids")), n.get("text").asText()));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    private static int[] ints(JsonNode array) {
        int[] a = new int[array.size()];
        for (int i = 0; i < a.length; i++) {
            a[i] = array.get(i).asInt();
        }
        return a;
    }
}

package io.kvtier.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Small Mooncake trace files for CLI tests. */
final class TraceFiles {

    private TraceFiles() {
    }

    /** Writes {@code lines} (JSON objects, one request each) to a new file in {@code dir}. */
    static Path write(Path dir, String... lines) throws IOException {
        Path t = Files.createTempFile(dir, "trace", ".jsonl");
        Files.writeString(t, String.join("\n", lines) + "\n");
        return t;
    }

    /** One request line. */
    static String request(long timestampMs, int inputLength, int outputLength, int... hashIds) {
        StringBuilder ids = new StringBuilder();
        for (int id : hashIds) {
            ids.append(ids.isEmpty() ? "" : ", ").append(id);
        }
        return "{\"timestamp\": " + timestampMs + ", \"input_length\": " + inputLength + ", \"output_length\": " + outputLength
                + ", \"hash_ids\": [" + ids + "]}";
    }
}

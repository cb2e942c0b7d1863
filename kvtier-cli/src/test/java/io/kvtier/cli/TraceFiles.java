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

    /** Two requests 100 s apart sharing their first full block: the small trace the replay edge tests run. */
    static Path twoRequests(Path dir) throws IOException {
        return write(dir, request(0, 1300, 5, 0, 1, 2), request(100_000, 1300, 5, 0, 1, 3));
    }

    /** {@code replay --trace <twoRequests> args...} in process. */
    static CliRun replayTwoRequests(Path dir, String... args) throws IOException {
        java.util.List<String> all = new java.util.ArrayList<>(java.util.List.of("replay", "--trace", twoRequests(dir).toString()));
        all.addAll(java.util.List.of(args));
        return CliRun.of(all.toArray(String[]::new));
    }
}

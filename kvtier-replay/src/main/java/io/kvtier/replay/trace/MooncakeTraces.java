package io.kvtier.replay.trace;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Where the Mooncake traces shipped with the project live: {@code shared/traces/mooncake/}
 * beside the project root (every developer machine and CI run has {@code ../shared}).
 */
public final class MooncakeTraces {

    /** File name of the real conversation trace (12,031 requests). */
    public static final String CONVERSATION = "conversation_trace.jsonl";

    /** File name of the synthetic trace (3,993 requests, more prefix sharing). */
    public static final String SYNTHETIC = "synthetic_trace.jsonl";

    private MooncakeTraces() {
    }

    /**
     * The first {@code shared/traces/mooncake} folder found in {@code from} or one of its
     * ancestors, so it is found from the project root as from a module's folder.
     *
     * @throws IOException when there is none
     */
    public static Path directory(Path from) throws IOException {
        for (Path p = from.toAbsolutePath(); p != null; p = p.getParent()) {
            Path candidate = p.resolve("shared").resolve("traces").resolve("mooncake");
            if (Files.isDirectory(candidate)) {
                return candidate;
            }
        }
        throw new IOException("no shared/traces/mooncake in " + from.toAbsolutePath() + " or above");
    }

    /** {@link #directory(Path)} searched from the working directory. */
    public static Path directory() throws IOException {
        return directory(Path.of(""));
    }

    /**
     * Reads the shipped trace {@code fileName} ({@link #CONVERSATION} or {@link #SYNTHETIC}).
     *
     * @throws IOException when the folder is not found or the file cannot be read or parsed
     */
    public static Trace read(String fileName) throws IOException {
        return TraceReader.read(directory().resolve(fileName));
    }
}

package io.kvtier.model;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * Writes a file through a temporary name beside it, then renames it over the target: a reader of
 * the target sees the old file or the whole new one, never a truncated one, and a failed write
 * leaves the target as it was (the temporary file is deleted, also when a signal stops the JVM).
 */
public final class AtomicReplace {

    /** Writes the whole file at the path it is given. */
    @FunctionalInterface
    public interface Writer {
        void write(Path tmp) throws IOException;
    }

    private AtomicReplace() {
    }

    /**
     * Replaces {@code out} with what {@code writer} writes.
     *
     * @param what the file as the error names it ("checkpoint", "GGUF file")
     * @throws UncheckedIOException when the file cannot be written or renamed
     */
    public static void replace(Path out, String what, Writer writer) {
        Path abs = out.toAbsolutePath();
        Path tmp = abs.resolveSibling("." + abs.getFileName() + ".tmp-" + ProcessHandle.current().pid());
        // A signal (SIGINT, SIGTERM) ends the JVM without running the finally below: the hook
        // removes the temporary file then, so a stopped write leaves no gigabytes behind.
        Thread cleanup = new Thread(() -> deleteQuietly(tmp), "kvtier-tmp-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanup);
        try {
            writer.write(tmp);
            Files.move(tmp, abs, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + what + " " + out, e);
        } finally {
            deleteQuietly(tmp);
            try {
                Runtime.getRuntime().removeShutdownHook(cleanup);
            } catch (IllegalStateException shuttingDown) {
                // the hook runs (or ran) anyway
            }
        }
    }

    /** Best effort: the file is only left when the write itself failed. */
    private static void deleteQuietly(Path tmp) {
        try {
            Files.deleteIfExists(tmp);
        } catch (IOException ignored) {
            // nothing more to do
        }
    }
}

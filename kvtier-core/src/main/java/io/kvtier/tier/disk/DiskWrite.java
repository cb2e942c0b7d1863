package io.kvtier.tier.disk;

/**
 * Outcome of {@link DiskStore#write}. A failure (disk full, I/O error, a directory that cannot be
 * created, a store that does not own the directory) leaves no file visible under the chunk's
 * name and no temporary file behind; the caller counts it as a {@code store_failures} and drops
 * the tier entry.
 */
public sealed interface DiskWrite {

    /**
     * The chunk file is published under its name.
     *
     * @param fileBytes bytes of the file (header + payload)
     * @param nanos     time the write took, from opening the temporary file to the rename (and
     *                  directory fsync, if configured)
     */
    record Written(long fileBytes, long nanos) implements DiskWrite {
    }

    /**
     * Nothing was published.
     *
     * @param reason what failed, with the path and the operating system's message
     */
    record Failed(String reason) implements DiskWrite {
    }

    /** Whether the chunk was published. */
    default boolean ok() {
        return this instanceof Written;
    }
}

package io.kvtier.tier.disk;

import io.kvtier.tier.ChunkHeader;

/**
 * Outcome of {@link DiskStore#read}: the chunk was read and verified, or it must not be used.
 * Bad data and I/O errors are results, never exceptions. After {@link Corrupt} or {@link Missing}
 * the destination's bytes are unspecified (the payload is read in place before its checksum is
 * known); the caller drops the tier entry and counts a load failure.
 */
public sealed interface DiskRead {

    /**
     * Header and payload match what the reader expected; the payload is in the destination.
     *
     * @param header the stored header (its {@code payloadCrc} lets the caller write a verified
     *               header in front of the payload elsewhere, e.g. into a host slot)
     */
    record Ok(ChunkHeader header) implements DiskRead {
    }

    /**
     * The file exists but is not the expected chunk: truncated, damaged, of another namespace,
     * key, parent or tokens, or unreadable (an I/O error). The owner deletes such a file.
     *
     * @param reason what is wrong, with the file's path
     */
    record Corrupt(String reason) implements DiskRead {
    }

    /** There is no file for the key (never written, evicted, or deleted by its owner meanwhile). */
    record Missing() implements DiskRead {
    }

    /** Whether the chunk may be used. */
    default boolean ok() {
        return this instanceof Ok;
    }
}

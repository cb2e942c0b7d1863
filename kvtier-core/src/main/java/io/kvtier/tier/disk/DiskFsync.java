package io.kvtier.tier.disk;

import java.util.Locale;

/**
 * How much a chunk write forces to stable storage before it counts as written
 * ({@code --disk-fsync}). Whatever the policy, a chunk is published by an atomic rename, so a
 * reader never sees a partial file; the policy only decides what survives a power loss or a
 * kernel crash (a process crash loses nothing the kernel already has).
 */
public enum DiskFsync {
    /** No fsync: fastest. After a power loss a published file may hold garbage, which the CRC32C check rejects. */
    NONE,
    /** {@code fdatasync} of the temporary file before the rename: a published file's bytes are on disk. */
    DATA,
    /** As {@link #DATA}, plus an fsync of the directory after the rename: the file's name is on disk too. */
    DATA_AND_DIR;

    /**
     * Parses a command-line value: {@code none}, {@code data}, {@code data-and-dir} (case-insensitive,
     * {@code _} accepted for {@code -}).
     *
     * @throws IllegalArgumentException naming the accepted values
     */
    public static DiskFsync parse(String value) {
        return switch (value.trim().toLowerCase(Locale.ROOT).replace('_', '-')) {
            case "none" -> NONE;
            case "data" -> DATA;
            case "data-and-dir" -> DATA_AND_DIR;
            default -> throw new IllegalArgumentException("--disk-fsync: unknown value '" + value
                    + "' (expected none, data or data-and-dir)");
        };
    }

    /** The command-line spelling ({@code none}, {@code data}, {@code data-and-dir}). */
    public String cliName() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
}

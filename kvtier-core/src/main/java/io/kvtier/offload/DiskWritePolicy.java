package io.kvtier.offload;

/** When chunks are written from the host tier to the disk tier. */
public enum DiskWritePolicy {
    /** After every successful host store, asynchronously (the default). */
    THROUGH,
    /** Only when the host tier is about to evict them: the host store waits for those writes. */
    ON_EVICT;

    /** Parses {@code through} or {@code on-evict}. */
    public static DiskWritePolicy parse(String s) {
        return switch (s) {
            case "through" -> THROUGH;
            case "on-evict" -> ON_EVICT;
            default -> throw new IllegalArgumentException("disk write policy must be through or on-evict, got '" + s + "'");
        };
    }
}

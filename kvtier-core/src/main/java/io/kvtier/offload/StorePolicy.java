package io.kvtier.offload;

import java.util.Locale;

/**
 * When a device block is stored in the host tier ({@code --store-policy}, {@code --store-horizon}).
 *
 * <p>{@link Mode#EAGER}: at the commit that completes its chunk (every full chunk is written once).
 * {@link Mode#LAZY}: only when one of the chunk's blocks is among the first {@code horizonBlocks}
 * blocks of the device pool's free queue (the blocks the allocator reuses next), checked at the
 * start of every engine step; blocks reused by a device hit before then are never written. The
 * store job then holds a reference on each block it copies, so the block leaves the free queue
 * and cannot be reallocated while it is read. A chunk whose block is evicted before its store ran
 * is counted in {@link OffloadStats#blocksNotStored()} as {@value OffloadStats#EVICTED_BEFORE_STORE}.
 *
 * @param mode          eager or lazy
 * @param horizonBlocks lazy: blocks from the free queue's head that are stored (>= 1); ignored when eager
 */
public record StorePolicy(Mode mode, int horizonBlocks) {

    /** When stores happen. */
    public enum Mode {
        EAGER, LAZY
    }

    /** Default lazy horizon, blocks: a few steps' allocations of a small engine. */
    public static final int DEFAULT_HORIZON_BLOCKS = 64;

    public static final StorePolicy EAGER = new StorePolicy(Mode.EAGER, DEFAULT_HORIZON_BLOCKS);

    public StorePolicy {
        java.util.Objects.requireNonNull(mode, "mode");
        if (horizonBlocks < 1) {
            throw new IllegalArgumentException("store horizon must be at least 1 block, got " + horizonBlocks);
        }
    }

    public boolean lazy() {
        return mode == Mode.LAZY;
    }

    /**
     * Parses {@code eager} or {@code lazy}.
     *
     * @throws IllegalArgumentException for another name
     */
    public static StorePolicy parse(String name, int horizonBlocks) {
        return switch (name.trim().toLowerCase(Locale.ROOT)) {
            case "eager" -> new StorePolicy(Mode.EAGER, horizonBlocks);
            case "lazy" -> new StorePolicy(Mode.LAZY, horizonBlocks);
            default -> throw new IllegalArgumentException("unknown store policy '" + name + "' (expected eager or lazy)");
        };
    }

    /** {@code eager}, or {@code lazy/H} with the horizon in blocks. */
    @Override
    public String toString() {
        return lazy() ? "lazy/" + horizonBlocks : "eager";
    }
}

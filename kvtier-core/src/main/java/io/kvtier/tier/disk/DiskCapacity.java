package io.kvtier.tier.disk;

import io.kvtier.tier.ChunkHeader;

/**
 * Sizes of the disk tier's files, so that a {@code TierIndex} for the disk tier can be sized from
 * {@code --disk-cache-bytes}. A chunk file is its header ({@code 128 + 4 * tokens} bytes) followed
 * by its payload; on disk it occupies that size rounded up to the file system's allocation unit.
 */
public final class DiskCapacity {

    /** Allocation unit assumed when none is given: 4 KiB, the block size of ext4, xfs and most SSDs. */
    public static final long DEFAULT_ALLOCATION_UNIT = 4096;

    private DiskCapacity() {
    }

    /**
     * Bytes of one chunk file: header plus payload.
     *
     * @param payloadBytesPerChunk blocksPerChunk * bytesPerBlock (>= 0)
     * @param tokensPerChunk       blocksPerChunk * blockSize (>= 0)
     */
    public static long fileBytes(long payloadBytesPerChunk, int tokensPerChunk) {
        if (payloadBytesPerChunk < 0) {
            throw new IllegalArgumentException("payload bytes must not be negative: " + payloadBytesPerChunk);
        }
        return Math.addExact(ChunkHeader.encodedSize(tokensPerChunk), payloadBytesPerChunk);
    }

    /**
     * Bytes one chunk file occupies on a file system allocating in units of {@code allocationUnit}
     * bytes (the file size rounded up; at least one unit).
     */
    public static long allocatedBytes(long payloadBytesPerChunk, int tokensPerChunk, long allocationUnit) {
        if (allocationUnit <= 0) {
            throw new IllegalArgumentException("allocation unit must be positive: " + allocationUnit);
        }
        long file = fileBytes(payloadBytesPerChunk, tokensPerChunk);
        return Math.max(1, (file + allocationUnit - 1) / allocationUnit) * allocationUnit;
    }

    /**
     * How many chunks fit in {@code diskBytes} ({@code --disk-cache-bytes}), counting each file's
     * allocated size with {@link #DEFAULT_ALLOCATION_UNIT}; 0 if not even one fits.
     */
    public static int chunksFor(long diskBytes, long payloadBytesPerChunk, int tokensPerChunk) {
        return chunksFor(diskBytes, payloadBytesPerChunk, tokensPerChunk, DEFAULT_ALLOCATION_UNIT);
    }

    /** As {@link #chunksFor(long, long, int)} with an explicit allocation unit in bytes. */
    public static int chunksFor(long diskBytes, long payloadBytesPerChunk, int tokensPerChunk, long allocationUnit) {
        long each = allocatedBytes(payloadBytesPerChunk, tokensPerChunk, allocationUnit);
        return io.kvtier.tier.HostSlab.checkedChunks("disk cache", diskBytes, Math.max(0, diskBytes) / each, each);
    }
}

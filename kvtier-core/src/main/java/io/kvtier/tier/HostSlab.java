package io.kvtier.tier;

import io.kvtier.memory.ReservedMemory;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Off-heap slots of the host tier, one chunk per slot, in one {@link Arena} that this slab owns
 * and {@link #close()}s. A slot is a header area ({@link ChunkHeader} with up to
 * {@code maxTokensPerChunk} token ids, rounded up to {@value #ALIGN} bytes) followed by the
 * payload area ({@code payloadBytesPerChunk}, rounded up likewise). The arena is shared: the
 * transfer threads read and write slots, the engine thread owns the slot assignment
 * ({@link TierIndex}). The memory is reserved, not touched ({@link ReservedMemory}): a large tier
 * costs nothing at start and only the chunks stored become resident.
 */
public final class HostSlab implements AutoCloseable {

    /** Alignment of slots, headers and payloads, in bytes (a cache line). */
    public static final long ALIGN = 64;

    private final int slots;
    private final long payloadBytesPerChunk;
    private final int maxTokensPerChunk;
    private final long headerBytes;
    private final long slotBytes;
    private final Arena arena;
    private final MemorySegment memory;

    /**
     * @param slots                number of chunks (> 0)
     * @param payloadBytesPerChunk payload bytes of one chunk: blocksPerChunk * bytesPerBlock (> 0)
     * @param maxTokensPerChunk    token ids in one chunk's header: blocksPerChunk * blockSize (> 0)
     * @throws IllegalArgumentException for non-positive sizes or a slab over Long.MAX_VALUE bytes
     */
    public HostSlab(int slots, long payloadBytesPerChunk, int maxTokensPerChunk) {
        if (slots <= 0 || payloadBytesPerChunk <= 0 || maxTokensPerChunk <= 0) {
            throw new IllegalArgumentException("host slab needs positive sizes: slots=" + slots + ", payloadBytesPerChunk="
                    + payloadBytesPerChunk + ", maxTokensPerChunk=" + maxTokensPerChunk);
        }
        this.slots = slots;
        this.payloadBytesPerChunk = payloadBytesPerChunk;
        this.maxTokensPerChunk = maxTokensPerChunk;
        this.headerBytes = align(ChunkHeader.encodedSize(maxTokensPerChunk));
        this.slotBytes = slotBytesFor(payloadBytesPerChunk, maxTokensPerChunk);
        long total = Math.multiplyExact(slotBytes, (long) slots);
        this.arena = Arena.ofShared();
        this.memory = ReservedMemory.reserve(arena, total); // pages become resident only when a chunk is stored
    }

    /** Bytes of one slot (header area + payload area, aligned). */
    public static long slotBytesFor(long payloadBytesPerChunk, int maxTokensPerChunk) {
        return align(ChunkHeader.encodedSize(maxTokensPerChunk)) + align(payloadBytesPerChunk);
    }

    /**
     * How many chunks fit in {@code bytes} of host memory (at least 0).
     *
     * @param bytes                memory budget of the host tier
     * @param payloadBytesPerChunk payload bytes of one chunk
     * @param maxTokensPerChunk    token ids in one chunk's header
     */
    public static int chunksFor(long bytes, long payloadBytesPerChunk, int maxTokensPerChunk) {
        long slot = slotBytesFor(payloadBytesPerChunk, maxTokensPerChunk);
        return checkedChunks("host tier", bytes, Math.max(0, bytes) / slot, slot);
    }

    /**
     * {@code chunks} as an int. A tier holds at most {@link Integer#MAX_VALUE} chunks; a larger
     * size is refused rather than silently cut (a 100T host tier must not quietly become 44T).
     *
     * @throws IllegalArgumentException naming the size asked, the chunk size and the limit
     */
    public static int checkedChunks(String tier, long bytes, long chunks, long bytesPerChunk) {
        if (chunks > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(tier + " of " + bytes + " bytes would be " + chunks + " chunks of "
                    + bytesPerChunk + " bytes; at most " + Integer.MAX_VALUE + " chunks ("
                    + Math.multiplyExact((long) Integer.MAX_VALUE, bytesPerChunk) + " bytes) are supported");
        }
        return (int) chunks;
    }

    private static long align(long n) {
        return (n + ALIGN - 1) / ALIGN * ALIGN;
    }

    /** Number of slots. */
    public int slots() {
        return slots;
    }

    /** Payload bytes a slot can hold. */
    public long payloadBytesPerChunk() {
        return payloadBytesPerChunk;
    }

    /** Token ids a slot's header can hold. */
    public int maxTokensPerChunk() {
        return maxTokensPerChunk;
    }

    /** Bytes of a slot's header area (the payload starts at this offset within the slot). */
    public long headerBytes() {
        return headerBytes;
    }

    /** Bytes of one slot. */
    public long slotBytes() {
        return slotBytes;
    }

    /** Bytes of the whole slab. */
    public long byteSize() {
        return memory.byteSize();
    }

    /** Bytes of the slab now resident in memory (slots written at least once). */
    public long residentBytes() {
        return ReservedMemory.residentBytes(memory);
    }

    /** The whole slot {@code i} (header area, then payload area). */
    public MemorySegment slot(int i) {
        return memory.asSlice(offsetOf(i), slotBytes);
    }

    /** The header area of slot {@code i}. */
    public MemorySegment headerOf(int i) {
        return memory.asSlice(offsetOf(i), headerBytes);
    }

    /** The first {@code bytes} of the payload area of slot {@code i}. */
    public MemorySegment payloadOf(int i, long bytes) {
        if (bytes < 0 || bytes > payloadBytesPerChunk) {
            throw new IllegalArgumentException("payload of " + bytes + " bytes does not fit a host slot of "
                    + payloadBytesPerChunk);
        }
        return memory.asSlice(offsetOf(i) + headerBytes, bytes);
    }

    /** The whole payload area of slot {@code i} ({@code payloadBytesPerChunk} bytes). */
    public MemorySegment payloadOf(int i) {
        return payloadOf(i, payloadBytesPerChunk);
    }

    private long offsetOf(int i) {
        if (i < 0 || i >= slots) {
            throw new IndexOutOfBoundsException("host slot " + i + " out of 0.." + (slots - 1));
        }
        return i * slotBytes;
    }

    /** Frees the memory. Slots must no longer be in use by any thread. */
    @Override
    public void close() {
        arena.close();
    }

    @Override
    public String toString() {
        return "HostSlab[" + slots + " slots x " + slotBytes + " B]";
    }
}

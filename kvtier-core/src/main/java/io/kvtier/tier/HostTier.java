package io.kvtier.tier;

import java.util.Objects;

/**
 * The host tier: the bookkeeping ({@link TierIndex}, named {@value #NAME}) and the off-heap slots
 * ({@link HostSlab}) it hands out, with one capacity. The index runs on the engine thread; the
 * slab is read and written by the transfer engine. Closing frees the slab.
 */
public final class HostTier implements AutoCloseable {

    /** Tier name used in events and reports. */
    public static final String NAME = "host";

    private final TierIndex index;
    private final HostSlab slab;

    /**
     * @param capacityChunks       slots (> 0)
     * @param payloadBytesPerChunk blocksPerChunk * bytesPerBlock
     * @param maxTokensPerChunk    blocksPerChunk * blockSize
     * @param policy               a fresh policy for this tier (ARC sized to {@code capacityChunks})
     * @param events               where resident-set changes go
     */
    public HostTier(int capacityChunks, long payloadBytesPerChunk, int maxTokensPerChunk, CachePolicy policy,
                    KvEvents events) {
        this.index = new TierIndex(NAME, capacityChunks, policy, events);
        this.slab = new HostSlab(capacityChunks, payloadBytesPerChunk, maxTokensPerChunk);
    }

    /**
     * A host tier using at most {@code bytes} of memory, with a policy chosen by name.
     *
     * @throws IllegalArgumentException if not even one chunk fits
     */
    public static HostTier ofBytes(long bytes, long payloadBytesPerChunk, int maxTokensPerChunk, String policy,
                                   KvEvents events) {
        int chunks = HostSlab.chunksFor(bytes, payloadBytesPerChunk, maxTokensPerChunk);
        if (chunks == 0) {
            throw new IllegalArgumentException("host tier of " + bytes + " bytes cannot hold one chunk of "
                    + HostSlab.slotBytesFor(payloadBytesPerChunk, maxTokensPerChunk) + " bytes");
        }
        return new HostTier(chunks, payloadBytesPerChunk, maxTokensPerChunk, CachePolicy.named(policy, chunks),
                Objects.requireNonNull(events, "events"));
    }

    /** The bookkeeping (engine thread only). */
    public TierIndex index() {
        return index;
    }

    /** The slots' memory. */
    public HostSlab slab() {
        return slab;
    }

    /** Number of chunks. */
    public int capacity() {
        return index.capacity();
    }

    @Override
    public void close() {
        slab.close();
    }

    @Override
    public String toString() {
        return "HostTier[" + index + ", " + slab + "]";
    }
}

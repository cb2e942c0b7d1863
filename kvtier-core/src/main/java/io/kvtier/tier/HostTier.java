package io.kvtier.tier;

import java.util.Objects;

/**
 * The host tier: the bookkeeping ({@link TierIndex}, named {@value #NAME}) and the off-heap slots
 * ({@link HostSlab}) it hands out, with one capacity. The index runs on the engine thread; the
 * slab is read and written by the transfer engine. Closing frees the slab. A tier made by
 * {@link #withoutSlab} has the bookkeeping only, for a transfer engine that moves no bytes.
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
        this(new TierIndex(NAME, capacityChunks, policy, events),
                new HostSlab(capacityChunks, payloadBytesPerChunk, maxTokensPerChunk));
    }

    private HostTier(TierIndex index, HostSlab slab) {
        this.index = index;
        this.slab = slab;
    }

    /**
     * A host tier with the bookkeeping only and no slots' memory, for a transfer engine that moves
     * no bytes (trace replay's simulated data plane): {@link #slab()} throws. Costs a few hundred
     * bytes of heap per entry instead of a slot of header and payload per chunk of capacity.
     *
     * @param capacityChunks chunks (> 0)
     * @param policy         a fresh policy for this tier
     * @param events         where resident-set changes go
     */
    public static HostTier withoutSlab(int capacityChunks, CachePolicy policy, KvEvents events) {
        return new HostTier(new TierIndex(NAME, capacityChunks, policy, Objects.requireNonNull(events, "events")), null);
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

    /**
     * The slots' memory.
     *
     * @throws IllegalStateException for a tier made {@link #withoutSlab}
     */
    public HostSlab slab() {
        if (slab == null) {
            throw new IllegalStateException("host tier has no slab: it was made without one (bookkeeping only)");
        }
        return slab;
    }

    /** Whether the tier has slot memory ({@link #withoutSlab} has none). */
    public boolean hasSlab() {
        return slab != null;
    }

    /** Number of chunks. */
    public int capacity() {
        return index.capacity();
    }

    @Override
    public void close() {
        if (slab != null) {
            slab.close();
        }
    }

    @Override
    public String toString() {
        return "HostTier[" + index + ", " + (slab == null ? "no slab" : slab) + "]";
    }
}

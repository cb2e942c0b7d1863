package io.kvtier.offload.transfer;

import io.kvtier.kv.BlockKey;
import io.kvtier.tier.ChunkHeader;
import io.kvtier.tier.HostSlab;
import io.kvtier.tier.disk.DiskRead;
import io.kvtier.tier.disk.DiskStore;
import io.kvtier.tier.disk.DiskWrite;
import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * The data path between the host tier's slots and the disk tier's files, one chunk at a time.
 * Thread-safe as far as {@link DiskStore} is; used by the transfer engine's disk thread.
 */
public final class DiskCopier {

    private final HostSlab slab;
    private final DiskStore store;
    private final long bytesPerBlock;

    /**
     * @param slab          the host tier's slots
     * @param store         the disk tier's files
     * @param bytesPerBlock bytes of one device block; a chunk's payload is blocks * this
     */
    public DiskCopier(HostSlab slab, DiskStore store, long bytesPerBlock) {
        this.slab = Objects.requireNonNull(slab, "slab");
        this.store = Objects.requireNonNull(store, "store");
        this.bytesPerBlock = bytesPerBlock;
    }

    public DiskStore store() {
        return store;
    }

    private long payloadBytes(ChunkCopy c) {
        return c.blockCount() * bytesPerBlock;
    }

    /**
     * Publishes the chunk in host slot {@code c.slot()} as its file, after checking the slot's
     * header names the expected chunk.
     *
     * @return null on success, else why it failed
     */
    public String write(ChunkCopy c) {
        MemorySegment payload = slab.payloadOf(c.slot(), payloadBytes(c));
        ChunkHeader.Verification v = ChunkHeader.verifyAt(slab.headerOf(c.slot()), 0, c.namespace(), c.key(),
                c.parent(), c.tokensShared(), payload);
        if (v instanceof ChunkHeader.Verification.Corrupt bad) {
            return "host slot " + c.slot() + " does not hold chunk " + c.key().shortHex() + ": " + bad.reason();
        }
        ChunkHeader header = ChunkHeader.readFrom(slab.headerOf(c.slot()), 0);
        return switch (store.write(c.key(), header, payload)) {
            case DiskWrite.Written w -> null;
            case DiskWrite.Failed f -> f.reason();
        };
    }

    /**
     * Reads and verifies the chunk's file into host slot {@code c.slot()}, header included. A
     * corrupt file is deleted (so it is not read again).
     *
     * @return null on success, else why it failed
     */
    public String read(ChunkCopy c) {
        MemorySegment payload = slab.payloadOf(c.slot(), payloadBytes(c));
        return switch (store.read(c.key(), c.parent(), c.tokensShared(), payload)) {
            case DiskRead.Ok ok -> {
                ok.header().writeTo(slab.headerOf(c.slot()), 0);
                yield null;
            }
            case DiskRead.Missing m -> "chunk " + c.key().shortHex() + ": no file on disk";
            case DiskRead.Corrupt bad -> {
                store.delete(c.key());
                yield "chunk " + c.key().shortHex() + " on disk is corrupt: " + bad.reason();
            }
        };
    }

    /** Deletes the file of an evicted chunk (no-op for a store that does not own the directory). */
    public void delete(BlockKey key) {
        store.delete(key);
    }
}

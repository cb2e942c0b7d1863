package io.kvtier.offload.transfer;

import io.kvtier.kv.Namespace;
import io.kvtier.tier.ChunkHeader;
import io.kvtier.tier.HostSlab;
import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.zip.CRC32C;

/**
 * The data path between the device slab and the host tier's slots, for one chunk at a time.
 * Device block {@code b} is the range {@code [b * bytesPerBlock, (b+1) * bytesPerBlock)} of the
 * device slab; a chunk's payload is its blocks concatenated, at the start of the slot's payload
 * area. Stateless apart from the two memory segments: safe to use from several threads on
 * disjoint blocks and slots.
 */
public final class ChunkCopier {

    /**
     * Bytes copied before the CRC catches up on a store: small enough that the bytes just
     * written are still in the core's L2 cache when they are checksummed.
     */
    static final long CRC_SPAN = 128 * 1024;

    private final MemorySegment device;
    private final long bytesPerBlock;
    private final int deviceBlocks;
    private final HostSlab slab;

    /**
     * @param device        the device KV slab (must be accessible from the transfer threads,
     *                      i.e. allocated in a shared or global arena)
     * @param bytesPerBlock bytes of one device block ({@code KvLayout.bytesPerBlock()})
     * @param slab          the host tier's slots
     */
    public ChunkCopier(MemorySegment device, long bytesPerBlock, HostSlab slab) {
        this.device = Objects.requireNonNull(device, "device");
        this.slab = Objects.requireNonNull(slab, "slab");
        if (bytesPerBlock <= 0 || device.byteSize() < bytesPerBlock) {
            throw new IllegalArgumentException("device slab of " + device.byteSize() + " bytes cannot hold blocks of "
                    + bytesPerBlock + " bytes");
        }
        this.bytesPerBlock = bytesPerBlock;
        this.deviceBlocks = (int) Math.min(Integer.MAX_VALUE, device.byteSize() / bytesPerBlock);
    }

    /** The host slots this copier writes and reads. */
    public HostSlab slab() {
        return slab;
    }

    /** Bytes of one device block. */
    public long bytesPerBlock() {
        return bytesPerBlock;
    }

    /** Payload bytes of a chunk. */
    public long payloadBytes(ChunkCopy c) {
        return c.blockCount() * bytesPerBlock;
    }

    /** Bytes a load of the chunk writes into the device (blocks marked -1 are not copied). */
    public long loadedBytes(ChunkCopy c) {
        return c.copiedBlockCount() * bytesPerBlock;
    }

    /**
     * Checks that every chunk of the job fits: blocks in the device slab, slot in the tier, payload
     * and token ids within a slot.
     *
     * @throws IllegalArgumentException naming the job, the chunk and the problem
     */
    public void validate(TransferJob job) {
        for (int i = 0; i < job.chunks().size(); i++) {
            String problem = problem(job, job.chunks().get(i));
            if (problem != null) {
                // The message is built only for a bad chunk: validation runs for every job on the engine thread.
                throw new IllegalArgumentException("job " + job.jobId() + " chunk #" + i + " ("
                        + job.chunks().get(i).key().shortHex() + "): " + problem);
            }
        }
    }

    /** What is wrong with chunk {@code c} of {@code job}, or null if it fits. */
    private String problem(TransferJob job, ChunkCopy c) {
        if (c.slot() >= slab.slots()) {
            return "slot " + c.slot() + " out of 0.." + (slab.slots() - 1);
        }
        for (int b = 0; b < c.blockCount(); b++) {
            if ((job instanceof DiskJob || job instanceof RemoteJob r && !r.toDevice()) && c.deviceBlock(b) != -1) {
                return "a disk or remote job (other than a load) touches no device block, block #" + b + " is "
                        + c.deviceBlock(b);
            }
            if (c.deviceBlock(b) == -1 && job instanceof StoreJob) {
                return "a store needs every device block, block #" + b + " is -1";
            }
            if (c.deviceBlock(b) < -1 || c.deviceBlock(b) >= deviceBlocks) {
                return "device block " + c.deviceBlock(b) + " out of 0.." + (deviceBlocks - 1);
            }
        }
        if (payloadBytes(c) > slab.payloadBytesPerChunk()) {
            return "payload of " + payloadBytes(c) + " bytes exceeds a slot's " + slab.payloadBytesPerChunk();
        }
        if (c.tokensShared().length > slab.maxTokensPerChunk()) {
            return c.tokensShared().length + " token ids exceed a slot's " + slab.maxTokensPerChunk();
        }
        return null;
    }

    private MemorySegment block(int b) {
        return device.asSlice(b * bytesPerBlock, bytesPerBlock);
    }

    /**
     * Copies the chunk's device blocks into its slot, checksumming the copy as it goes, then
     * writes the header.
     *
     * @return payload bytes copied
     */
    public long store(ChunkCopy c) {
        MemorySegment payload = slab.payloadOf(c.slot(), payloadBytes(c));
        CRC32C crc = new CRC32C();
        for (int i = 0; i < c.blockCount(); i++) {
            MemorySegment src = block(c.deviceBlock(i));
            long base = i * bytesPerBlock;
            for (long at = 0; at < bytesPerBlock; at += CRC_SPAN) {
                long n = Math.min(CRC_SPAN, bytesPerBlock - at);
                MemorySegment.copy(src, at, payload, base + at, n);
                ChunkHeader.updateCrc(crc, payload.asSlice(base + at, n));
            }
        }
        new ChunkHeader(Namespace.FORMAT_VERSION, c.namespace(), c.key(), c.parent(), c.tokensShared(),
                payload.byteSize(), (int) crc.getValue()).writeTo(slab.headerOf(c.slot()), 0);
        return payload.byteSize();
    }

    /**
     * Copies a chunk's payload, already verified by the caller (e.g. where a remote value
     * arrived), into its device blocks, except blocks marked -1.
     *
     * @param payload the chunk's blocks concatenated ({@link #payloadBytes} bytes)
     */
    public void toDevice(ChunkCopy c, MemorySegment payload) {
        for (int i = 0; i < c.blockCount(); i++) {
            int b = c.deviceBlock(i);
            if (b >= 0) {
                MemorySegment.copy(payload, i * bytesPerBlock, device, b * bytesPerBlock, bytesPerBlock);
            }
        }
    }

    /**
     * Verifies the chunk in its slot against the expected fields and checksum, and only if it
     * matches copies the payload into the device blocks (except blocks marked -1).
     *
     * @return the verification; on {@link ChunkHeader.Verification.Corrupt} nothing was copied
     */
    public ChunkHeader.Verification load(ChunkCopy c) {
        MemorySegment payload = slab.payloadOf(c.slot(), payloadBytes(c));
        ChunkHeader.Verification v = ChunkHeader.verifyAt(slab.headerOf(c.slot()), 0, c.namespace(), c.key(),
                c.parent(), c.tokensShared(), payload);
        if (v.ok()) {
            toDevice(c, payload);
        }
        return v;
    }
}

package io.kvtier.offload.transfer;

import io.kvtier.kv.BlockKey;
import io.kvtier.kv.KvLayout;
import io.kvtier.tier.HostSlab;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * A device slab of {@code deviceBlocks} blocks (tiny layout, 1 KiB per block) filled with seeded
 * random bytes, host slots for chunks of {@code blocksPerChunk} blocks, and builders for jobs.
 * Chunk {@code i} has key {@code (0,0,0,100+i)}, parent key {@code 100+i-1} and token ids
 * derived from {@code i}.
 */
final class TransferFixture implements AutoCloseable {

    static final KvLayout LAYOUT = new KvLayout(2, 2, 8, 4); // 2*2*4*2*8 floats = 1024 bytes per block
    static final BlockKey NAMESPACE = new BlockKey(1, 2, 3, 4);

    final long seed;
    final int blocksPerChunk;
    final Arena arena = Arena.ofShared();
    final MemorySegment device;
    final HostSlab slab;
    final ChunkCopier copier;

    TransferFixture(int deviceBlocks, int slots, int blocksPerChunk, long seed) {
        this.seed = seed;
        this.blocksPerChunk = blocksPerChunk;
        this.device = arena.allocate(deviceBlocks * LAYOUT.bytesPerBlock(), 64);
        this.slab = new HostSlab(slots, blocksPerChunk * LAYOUT.bytesPerBlock(), blocksPerChunk * LAYOUT.blockSize());
        this.copier = new ChunkCopier(device, LAYOUT.bytesPerBlock(), slab);
        Random rnd = new Random(seed);
        for (long i = 0; i < device.byteSize(); i += 8) {
            device.set(ValueLayout.JAVA_LONG, i, rnd.nextLong());
        }
    }

    static BlockKey key(int chunk) {
        return new BlockKey(0, 0, 0, 100 + chunk);
    }

    int[] tokens(int chunk) {
        int[] t = new int[blocksPerChunk * LAYOUT.blockSize()];
        for (int i = 0; i < t.length; i++) {
            t[i] = chunk * 1000 + i;
        }
        return t;
    }

    /** Chunk {@code chunk} between slot {@code slot} and the given device blocks. */
    ChunkCopy copy(int chunk, int slot, int... blocks) {
        return new ChunkCopy(blocks, slot, NAMESPACE, key(chunk), key(chunk - 1), tokens(chunk));
    }

    /**
     * A chain of {@code n} chunks starting at chunk 0: chunk i uses slot {@code firstSlot + i} and
     * device blocks {@code firstBlock + i*blocksPerChunk ...}.
     */
    List<ChunkCopy> chain(int n, int firstSlot, int firstBlock) {
        List<ChunkCopy> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int[] blocks = new int[blocksPerChunk];
            for (int j = 0; j < blocksPerChunk; j++) {
                blocks[j] = firstBlock + i * blocksPerChunk + j;
            }
            out.add(copy(i, firstSlot + i, blocks));
        }
        return out;
    }

    long bytesPerBlock() {
        return LAYOUT.bytesPerBlock();
    }

    MemorySegment block(int b) {
        return device.asSlice(b * bytesPerBlock(), bytesPerBlock());
    }

    byte[] blockBytes(int b) {
        return block(b).toArray(ValueLayout.JAVA_BYTE);
    }

    /** Fills blocks with a recognisable sentinel byte. */
    void fill(int fromBlock, int count, byte value) {
        device.asSlice(fromBlock * bytesPerBlock(), count * bytesPerBlock()).fill(value);
    }

    @Override
    public void close() {
        slab.close();
        arena.close();
    }
}

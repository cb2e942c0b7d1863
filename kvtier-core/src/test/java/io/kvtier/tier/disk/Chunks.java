package io.kvtier.tier.disk;

import io.kvtier.kv.BlockKey;
import io.kvtier.tier.ChunkHeader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Random;

/** Test chunks: seeded random payloads, their headers, and keys spread over shards. */
final class Chunks {

    static final BlockKey NS = new BlockKey(0x1111, 0x2222, 0x3333, 0x4444);
    static final BlockKey OTHER_NS = new BlockKey(0x5555, 0x6666, 0x7777, 0x8888);

    private Chunks() {
    }

    /** Key {@code i}: its first byte (shard) varies with i, so keys spread over shard directories. */
    static BlockKey key(long i) {
        return new BlockKey((i * 0x9E3779B97F4A7C15L) ^ (i << 56), 0xABCDL, i, i + 1);
    }

    /** Parent of key {@code i}: key i-1. */
    static BlockKey parent(long i) {
        return key(i - 1);
    }

    /** Token ids of chunk {@code i}: 16 ids derived from i. */
    static int[] tokens(long i) {
        int[] t = new int[16];
        for (int j = 0; j < t.length; j++) {
            t[j] = (int) (i * 100 + j);
        }
        return t;
    }

    /** A native payload of {@code bytes} random bytes from {@code seed}. */
    static MemorySegment payload(Arena arena, long bytes, long seed) {
        MemorySegment s = arena.allocate(Math.max(1, bytes), 64).asSlice(0, bytes);
        Random rnd = new Random(seed);
        long at = 0;
        for (; at + 8 <= bytes; at += 8) {
            s.set(ValueLayout.JAVA_LONG_UNALIGNED, at, rnd.nextLong());
        }
        for (; at < bytes; at++) {
            s.set(ValueLayout.JAVA_BYTE, at, (byte) rnd.nextInt());
        }
        return s;
    }

    /** The header of chunk {@code i} of namespace {@code ns} with this payload. */
    static ChunkHeader header(BlockKey ns, long i, MemorySegment payload) {
        return ChunkHeader.of(ns, key(i), parent(i), tokens(i), payload.byteSize(), ChunkHeader.crc32c(payload));
    }

    /** Writes chunk {@code i} and fails the test unless it was published. */
    static void write(DiskStore store, long i, MemorySegment payload) {
        DiskWrite w = store.write(key(i), header(store.namespace(), i, payload), payload);
        if (!w.ok()) {
            throw new AssertionError("write of chunk " + i + " failed: " + w);
        }
    }

    /** Reads chunk {@code i} into {@code dst}. */
    static DiskRead read(DiskStore store, long i, MemorySegment dst) {
        return store.read(key(i), parent(i), tokens(i), dst);
    }
}

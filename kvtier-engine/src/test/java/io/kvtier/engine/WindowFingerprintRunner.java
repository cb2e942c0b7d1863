package io.kvtier.engine;

import io.kvtier.kv.BlockPool;
import io.kvtier.kv.KvGroup;
import io.kvtier.kv.KvLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;

/**
 * The fingerprint model (ACCEPTANCE; {@link FingerprintModelRunner}) on KV groups: a full group
 * and sliding-window groups, each in its own pool. The KV written at position p in every layer of
 * every group is a function of (token, p, fingerprint of the prefix read back from group 0 at
 * p - 1); the next token hashes every KV byte a real model would attend: all positions of the
 * full group, only the window's positions of a window group. Stale, foreign or half-written KV
 * anywhere a layer reads changes the output; a table entry of -1 (a block the group gave back)
 * read by mistake throws.
 */
final class WindowFingerprintRunner implements ModelRunner {

    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;
    private final List<KvGroup> groups;
    private final List<BlockPool> pools;
    private final int vocab;
    private final int maxPositions;

    WindowFingerprintRunner(List<KvGroup> groups, List<BlockPool> pools, int vocab, int maxPositions) {
        this.groups = groups;
        this.pools = pools;
        this.vocab = vocab;
        this.maxPositions = maxPositions;
    }

    /** A group's layout: its layers, 1 KV head of 4 floats. */
    static KvLayout layout(KvGroup g, int blockSize) {
        return new KvLayout(g.layers().length, 1, 4, blockSize);
    }

    @Override
    public float[][] forward(List<ScheduledChunk> chunks) {
        float[][] out = new float[chunks.size()][];
        for (int c = 0; c < chunks.size(); c++) {
            ScheduledChunk ch = chunks.get(c);
            for (int i = 0; i < ch.tokens().length; i++) {
                int p = ch.startPos() + i;
                int prefix = p == 0 ? 0x5eed : pools.getFirst().slab().get(INT, base(0, ch.blockTables()[0], p - 1, 0, 0));
                int fp = FingerprintModelRunner.mix(prefix, ch.tokens()[i], p);
                for (KvGroup g : groups) {
                    write(g, ch.blockTables()[g.index()], p, fp);
                }
            }
            if (ch.wantLogits()) {
                out[c] = FingerprintEngines.oneHot(vocab, next(ch.blockTables(), ch.startPos() + ch.tokens().length - 1));
            }
        }
        return out;
    }

    private long base(int group, int[] table, int p, int layer, int kv) {
        KvLayout l = pools.get(group).layout();
        int block = table[p / l.blockSize()];
        if (block < 0) {
            throw new IllegalStateException("group " + group + " reads position " + p + " from a block it gave back");
        }
        return block * l.bytesPerBlock() + l.byteOffset(layer, kv, p % l.blockSize());
    }

    static int value(int group, int layer, int kv, int e, int fp) {
        return group == 0 && layer == 0 && kv == 0 && e == 0 ? fp : FingerprintModelRunner.mix(fp, (group * 8 + layer) * 2 + kv, e);
    }

    private void write(KvGroup g, int[] table, int p, int fp) {
        MemorySegment slab = pools.get(g.index()).slab();
        KvLayout l = pools.get(g.index()).layout();
        for (int layer = 0; layer < l.layers(); layer++) {
            for (int kv = 0; kv < 2; kv++) {
                long b = base(g.index(), table, p, layer, kv);
                for (int e = 0; e < l.kvDim(); e++) {
                    slab.set(INT, b + 4L * e, value(g.index(), layer, kv, e, fp));
                }
            }
        }
    }

    private int next(int[][] tables, int last) {
        int h = 17;
        for (KvGroup g : groups) {
            MemorySegment slab = pools.get(g.index()).slab();
            KvLayout l = pools.get(g.index()).layout();
            for (int p = g.sliding() ? Math.max(0, last - g.window() + 1) : 0; p <= last; p++) {
                for (int layer = 0; layer < l.layers(); layer++) {
                    for (int kv = 0; kv < 2; kv++) {
                        long b = base(g.index(), tables[g.index()], p, layer, kv);
                        for (int e = 0; e < l.kvDim(); e++) {
                            h = h * 31 + slab.get(INT, b + 4L * e);
                        }
                    }
                }
            }
        }
        return Math.floorMod(FingerprintModelRunner.mix(h, last, 7), vocab);
    }

    /**
     * The bytes group {@code group} (layout {@code l}) must hold for blocks [firstBlock, firstBlock + blocks)
     * of a sequence starting with {@code tokens}, blocks concatenated: the reference for a stored chunk.
     */
    static byte[] expectedChunk(KvLayout l, int group, int[] tokens, int firstBlock, int blocks) {
        int bs = l.blockSize();
        java.nio.ByteBuffer out = java.nio.ByteBuffer.allocate((int) (blocks * l.bytesPerBlock())).order(java.nio.ByteOrder.nativeOrder());
        int[] fp = new int[(firstBlock + blocks) * bs];
        for (int p = 0; p < fp.length; p++) {
            fp[p] = FingerprintModelRunner.mix(p == 0 ? 0x5eed : fp[p - 1], tokens[p], p);
        }
        for (int b = firstBlock; b < firstBlock + blocks; b++) {
            for (int layer = 0; layer < l.layers(); layer++) {
                for (int kv = 0; kv < 2; kv++) {
                    for (int slot = 0; slot < bs; slot++) {
                        for (int e = 0; e < l.kvDim(); e++) {
                            out.putInt(value(group, layer, kv, e, fp[b * bs + slot]));
                        }
                    }
                }
            }
        }
        return out.array();
    }

    @Override
    public int vocabSize() {
        return vocab;
    }

    @Override
    public int maxPositions() {
        return maxPositions;
    }

    @Override
    public void close() {
    }
}

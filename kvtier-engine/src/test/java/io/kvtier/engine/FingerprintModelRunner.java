package io.kvtier.engine;

import io.kvtier.kv.BlockPool;
import io.kvtier.kv.KvLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;

/**
 * A fake model for fast exact tests (ACCEPTANCE "fingerprint model"). The KV written at a
 * position is a deterministic function of (token, position, fingerprint of the prefix), where the
 * prefix fingerprint is read back from the KV of the previous position in the device slab; the
 * next token is a hash of every KV byte attended (all layers, K and V, positions 0..p). So any
 * stale, foreign, zeroed or half-written KV anywhere in a sequence changes its output.
 */
public final class FingerprintModelRunner implements ModelRunner {

    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;
    private final BlockPool pool;
    private final KvLayout layout;
    private final int vocab;
    private final int maxPositions;
    private long forwardCalls;

    public FingerprintModelRunner(BlockPool pool, int vocab, int maxPositions) {
        this.pool = pool;
        this.layout = pool.layout();
        this.vocab = vocab;
        this.maxPositions = maxPositions;
    }

    /** A small layout for tests: 2 layers, 1 KV head, 4 floats per head. */
    public static KvLayout layout(int blockSize) {
        return new KvLayout(2, 1, 4, blockSize);
    }

    @Override
    public float[][] forward(List<ScheduledChunk> chunks) {
        forwardCalls++;
        float[][] out = new float[chunks.size()][];
        for (int c = 0; c < chunks.size(); c++) {
            ScheduledChunk ch = chunks.get(c);
            for (int i = 0; i < ch.tokens().length; i++) {
                int p = ch.startPos() + i;
                int prefix = p == 0 ? 0x5eed : readFingerprint(ch.blockTable(), p - 1);
                writePosition(ch.blockTable(), p, mix(prefix, ch.tokens()[i], p));
            }
            if (ch.wantLogits()) {
                out[c] = FingerprintEngines.oneHot(vocab, next(ch.blockTable(), ch.startPos() + ch.tokens().length - 1));
            }
        }
        return out;
    }

    /**
     * The KV bytes a chunk of full blocks must hold: blocks [firstBlock, firstBlock + blocks) of
     * a sequence whose tokens (at least up to the chunk's end) are {@code tokens}, in the device
     * layout, blocks concatenated. The reference for "every ready tier entry's bytes".
     */
    public static byte[] expectedChunk(KvLayout layout, int[] tokens, int firstBlock, int blocks) {
        int bs = layout.blockSize();
        java.nio.ByteBuffer out = java.nio.ByteBuffer.allocate((int) (blocks * layout.bytesPerBlock()))
                .order(java.nio.ByteOrder.nativeOrder());
        int[] fp = new int[(firstBlock + blocks) * bs];
        for (int p = 0; p < fp.length; p++) {
            fp[p] = mix(p == 0 ? 0x5eed : fp[p - 1], tokens[p], p);
        }
        for (int b = firstBlock; b < firstBlock + blocks; b++) {
            for (int layer = 0; layer < layout.layers(); layer++) {
                for (int kv = 0; kv < 2; kv++) {
                    for (int slot = 0; slot < bs; slot++) {
                        int f = fp[b * bs + slot];
                        for (int e = 0; e < layout.kvDim(); e++) {
                            out.putInt(layer == 0 && kv == 0 && e == 0 ? f : mix(f, layer * 2 + kv, e));
                        }
                    }
                }
            }
        }
        return out.array();
    }

    /** Number of forward calls (steps executed). */
    public long forwardCalls() {
        return forwardCalls;
    }

    @Override
    public int vocabSize() {
        return vocab;
    }

    @Override
    public int maxPositions() {
        return maxPositions;
    }

    private long slotBase(int[] table, int p, int layer, int kv) {
        int block = table[p / layout.blockSize()];
        return block * layout.bytesPerBlock() + layout.byteOffset(layer, kv, p % layout.blockSize());
    }

    private int readFingerprint(int[] table, int p) {
        return pool.slab().get(INT, slotBase(table, p, 0, 0));
    }

    private void writePosition(int[] table, int p, int fp) {
        MemorySegment slab = pool.slab();
        for (int layer = 0; layer < layout.layers(); layer++) {
            for (int kv = 0; kv < 2; kv++) {
                long base = slotBase(table, p, layer, kv);
                for (int e = 0; e < layout.kvDim(); e++) {
                    int v = layer == 0 && kv == 0 && e == 0 ? fp : mix(fp, layer * 2 + kv, e);
                    slab.set(INT, base + 4L * e, v);
                }
            }
        }
    }

    private int next(int[] table, int last) {
        MemorySegment slab = pool.slab();
        int h = 17;
        for (int p = 0; p <= last; p++) {
            for (int layer = 0; layer < layout.layers(); layer++) {
                for (int kv = 0; kv < 2; kv++) {
                    long base = slotBase(table, p, layer, kv);
                    for (int e = 0; e < layout.kvDim(); e++) {
                        h = h * 31 + slab.get(INT, base + 4L * e);
                    }
                }
            }
        }
        return Math.floorMod(mix(h, last, 7), vocab);
    }

    static int mix(int a, int b, int c) {
        long x = (a * 0x9E3779B97F4A7C15L) ^ (b * 0xC2B2AE3D27D4EB4FL) ^ (c * 0x165667B19E3779F9L);
        x ^= x >>> 33;
        x *= 0xff51afd7ed558ccdL;
        x ^= x >>> 33;
        return (int) x;
    }
}

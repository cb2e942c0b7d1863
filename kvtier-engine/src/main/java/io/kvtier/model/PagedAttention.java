package io.kvtier.model;

import io.kvtier.kv.KvLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.List;

/**
 * Grouped-query attention straight over a paged KV slab. K and V of position {@code p} of a
 * sequence sit in block {@code blockTable[p / blockSize]}, slot {@code p % blockSize}; a block's
 * bytes start at {@code block * bytesPerBlock} and are laid out {@code [layer][K|V][slot][kvHead][headDim]}
 * ({@link KvLayout}). Nothing is gathered into a per-request copy: scores and the weighted sum
 * read the slab block by block.
 */
final class PagedAttention {

    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final ModelConfig c;
    private final Kernels kernels;
    private final float scale;

    PagedAttention(ModelConfig c, Kernels kernels) {
        this.c = c;
        this.kernels = kernels;
        this.scale = (float) (1.0 / Math.sqrt(c.headDim()));
    }

    /**
     * Writes K and V of every token of the step (rows of {@code a.k}, {@code a.v}: [T][kvDim])
     * into their slots of {@code layer} (of the group's layout), through the chunks' tables of {@code group}.
     */
    void writeKv(int layer, int group, int tokens, Activations a, List<SequenceChunk> chunks, MemorySegment slab,
                 KvLayout layout) {
        int kvDim = c.kvDim();
        int bs = layout.blockSize();
        for (int t = 0; t < tokens; t++) {
            int p = a.pos[t];
            long block = chunks.get(a.chunk[t]).blockTables()[group][p / bs];
            long base = block * layout.bytesPerBlock();
            MemorySegment.copy(a.k, t * kvDim, slab, F32, base + layout.byteOffset(layer, 0, p % bs), kvDim);
            MemorySegment.copy(a.v, t * kvDim, slab, F32, base + layout.byteOffset(layer, 1, p % bs), kvDim);
        }
    }

    /**
     * For query head {@code h} of token {@code t} at position p: {@code out[t][h] = softmax(q[t][h] .
     * K[s..p][h/group] / sqrt(headDim)) . V[s..p][h/group]}, where out is {@code a.xb2} [T][heads*headDim]
     * and {@code s = 0} for full attention ({@code window} 0), {@code s = max(0, p - window + 1)} for a
     * sliding-window layer. The window is a bound of the loops, not a mask: no slot before {@code s}
     * is read, so a block wholly before the window may already hold another sequence's data (or
     * none) without changing the result, and a sliding-window group's table may name no block there.
     * {@code layer} indexes the group's layout; {@code group} selects the chunk's block table.
     * {@code att} is a score buffer of at least p+1 floats.
     */
    void attend(int layer, int group, int window, int t, int h, Activations a, float[] att, List<SequenceChunk> chunks,
                MemorySegment slab, KvLayout layout) {
        int hd = c.headDim();
        int p = a.pos[t];
        int first = window > 0 ? Math.max(0, p - window + 1) : 0;
        int n = p + 1 - first;
        int[] table = chunks.get(a.chunk[t]).blockTables()[group];
        int bs = layout.blockSize();
        long bytesPerBlock = layout.bytesPerBlock();
        long slotBytes = (long) c.kvDim() * Float.BYTES;
        long headBytes = (long) (h / c.kvGroup()) * hd * Float.BYTES;
        long kOff = layout.byteOffset(layer, 0, 0) + headBytes;
        long vOff = layout.byteOffset(layer, 1, 0) + headBytes;
        int qOff = t * c.qDim() + h * hd;

        // scores over positions first..p, one block (or the window's part of it) at a time;
        // att[i] belongs to position first + i
        for (int s = first; s <= p; ) {
            int slot = s % bs;
            int count = Math.min(bs - slot, p + 1 - s);
            long base = table[s / bs] * bytesPerBlock + kOff + slot * slotBytes;
            kernels.scores(slab, base, slotBytes, count, a.q, qOff, hd, scale, att, s - first);
            s += count;
        }
        kernels.softmax(att, 0, n);

        // weighted sum of values
        java.util.Arrays.fill(a.xb2, qOff, qOff + hd, 0f);
        for (int s = first; s <= p; ) {
            int slot = s % bs;
            int count = Math.min(bs - slot, p + 1 - s);
            long base = table[s / bs] * bytesPerBlock + vOff + slot * slotBytes;
            kernels.weightedSum(slab, base, slotBytes, count, att, s - first, a.xb2, qOff, hd);
            s += count;
        }
    }
}

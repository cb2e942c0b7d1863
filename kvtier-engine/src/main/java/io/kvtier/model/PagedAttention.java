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
        writeKv(layer, group, tokens, a, chunks, slab, layout, 0, c.kvHeads());
    }

    /** As {@link #writeKv(int, int, int, Activations, List, MemorySegment, KvLayout)} for kv heads {@code kvFrom..kvTo-1} only. */
    void writeKv(int layer, int group, int tokens, Activations a, List<SequenceChunk> chunks, MemorySegment slab,
                 KvLayout layout, int kvFrom, int kvTo) {
        int kvDim = c.kvDim();
        int off = kvFrom * c.headDim();
        int len = (kvTo - kvFrom) * c.headDim();
        long offBytes = (long) off * Float.BYTES;
        int bs = layout.blockSize();
        for (int t = 0; t < tokens; t++) {
            int p = a.pos[t];
            long block = chunks.get(a.chunk[t]).blockTables()[group][p / bs];
            long base = block * layout.bytesPerBlock() + offBytes;
            MemorySegment.copy(a.k, t * kvDim + off, slab, F32, base + layout.byteOffset(layer, 0, p % bs), len);
            MemorySegment.copy(a.v, t * kvDim + off, slab, F32, base + layout.byteOffset(layer, 1, p % bs), len);
        }
    }

    /**
     * For query heads {@code hFrom..hTo-1} of token {@code t} at position p, each head {@code h}:
     * {@code out[t][h] = softmax(q[t][h] . K[s..p][h/group] / sqrt(headDim)) . V[s..p][h/group]}, where
     * out is {@code a.xb2} [T][heads*headDim] and {@code s = 0} for full attention ({@code window} 0),
     * {@code s = max(0, p - window + 1)} for a sliding-window layer. The window is a bound of the
     * loops, not a mask: no slot before {@code s} is read, so a block wholly before the window may
     * already hold another sequence's data (or none) without changing the result, and a
     * sliding-window group's table may name no block there. {@code layer} indexes the group's
     * layout; {@code group} selects the chunk's block table. {@code att} is a score buffer of at
     * least {@code (hTo - hFrom) * (p+1)} floats.
     *
     * <p>The slab is read block by block, every head of the range over the block's slots
     * ({@link Kernels#scoresBlock}, {@link Kernels#weightedSumBlock}): a slot's K (and V) of all kv heads
     * is one contiguous row of {@code kvDim} floats and a block's slots are consecutive rows, so a
     * token's context is one sequential stream and one call covers up to a block of positions (the
     * vector kernels then add the lanes of many slots' scores together instead of reducing each, and
     * keep the weighted sums in registers across the slots: {@link VectorAttention}).
     * Head by head (a head's {@code headDim} floats out of every row, then the next head) strided
     * through memory: on the 15M shape, 32 sequences at positions 128-135, a step's attention took
     * 10.3-11.5 ms of CPU on one thread against 7.7 ms now (A/B in separate runs at load ~20-30);
     * alone, over a context far larger than the caches, 61-64 against 40-44 ns per head and
     * position. A head's arithmetic is the same whatever the head range, so the values do not
     * depend on how a step splits its heads.
     */
    void attend(int layer, int group, int window, int t, int hFrom, int hTo, Activations a, float[] att,
                List<SequenceChunk> chunks, MemorySegment slab, KvLayout layout) {
        int hd = c.headDim();
        int p = a.pos[t];
        int first = window > 0 ? Math.max(0, p - window + 1) : 0;
        int n = p + 1 - first;                 // att[(h - hFrom) * n + i] belongs to head h, position first + i
        int[] table = chunks.get(a.chunk[t]).blockTables()[group];
        int bs = layout.blockSize();
        long bytesPerBlock = layout.bytesPerBlock();
        long slotBytes = (long) c.kvDim() * Float.BYTES;
        int kvGroup = c.kvGroup();
        long kOff = layout.byteOffset(layer, 0, 0);
        long vOff = layout.byteOffset(layer, 1, 0);
        int qOff = t * c.qDim();

        for (int s = first; s <= p; ) {         // scores, one block (or the window's part of it) at a time
            int slot = s % bs;
            int count = Math.min(bs - slot, p + 1 - s);
            long row = table[s / bs] * bytesPerBlock + kOff + slot * slotBytes;
            kernels.scoresBlock(slab, row, slotBytes, count, hFrom, hTo, kvGroup, hd, a.q, qOff, scale, att, s - first, n);
            s += count;
        }
        for (int h = hFrom; h < hTo; h++) {
            kernels.softmax(att, (h - hFrom) * n, n);
        }

        java.util.Arrays.fill(a.xb2, qOff + hFrom * hd, qOff + hTo * hd, 0f);
        for (int s = first; s <= p; ) {         // weighted sums of the values, in the same order
            int slot = s % bs;
            int count = Math.min(bs - slot, p + 1 - s);
            long row = table[s / bs] * bytesPerBlock + vOff + slot * slotBytes;
            kernels.weightedSumBlock(slab, row, slotBytes, count, hFrom, hTo, kvGroup, hd, att, s - first, n, a.xb2, qOff);
            s += count;
        }
    }
}

package io.kvtier.model;

import io.kvtier.kv.KvLayout;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * Test driver: one sequence through a {@link Transformer} with a small shared KV slab of its own
 * (sized for {@code maxPositions}, not the model's context, which may be 128k), returning the
 * logits of every step. Block ids are handed out in reverse order so that a sequence's blocks are
 * not contiguous in the slab.
 */
public final class LogitsDriver implements AutoCloseable {

    private final Transformer model;
    private final KvLayout layout;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment slab;
    private final int[] table;
    private int next;

    public LogitsDriver(Transformer model, int blockSize, int maxPositions) {
        this.model = model;
        this.layout = model.config().kvLayout(blockSize);
        int blocks = layout.blocksFor(maxPositions);
        this.slab = arena.allocate(layout.bytesPerBlock() * blocks, 64);
        this.table = new int[blocks];
        for (int b = 0; b < blocks; b++) {
            table[b] = blocks - 1 - b;
        }
    }

    /** Feeds {@code tokens} as one chunk at the next positions; the logits of its last token. */
    public float[] feed(int... tokens) {
        float[][] out = model.forward(List.of(new SequenceChunk(tokens, next, table, true)), slab, layout);
        next += tokens.length;
        return out[0];
    }

    /** Index of the largest logit, the lowest index on ties (llama.cpp's reference argmax). */
    public static int argmax(float[] v) {
        int best = 0;
        for (int i = 1; i < v.length; i++) {
            if (v[i] > v[best]) best = i;
        }
        return best;
    }

    @Override
    public void close() {
        arena.close();
    }
}

package io.kvtier.model;

import io.kvtier.kv.KvLayout;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * The checks a batch passes before a forward pass reads or writes anything: positions within the
 * model's {@code seq_len}, one block table per KV group, every block a chunk touches inside its
 * group's slab (from the window's first block for sliding-window groups), token ids inside the
 * vocabulary, and KV groups that fit the model's layers, heads and head size. Stateless.
 */
final class BatchChecks {

    private BatchChecks() {
    }

    /**
     * The tokens of {@code chunks} (T), after checking them against {@code kv} and the model.
     *
     * @throws IllegalArgumentException naming the first thing that does not fit
     */
    static int tokens(List<SequenceChunk> chunks, PagedKv kv, ModelConfig c, ArchSpec spec) {
        int[] windowOfGroup = windows(kv, c, spec);
        int tokens = 0;
        for (SequenceChunk ch : chunks) {
            if (ch.lastPos() >= c.seqLen()) {
                throw new IllegalArgumentException("position " + ch.lastPos() + " is beyond the model's seq_len "
                        + c.seqLen());
            }
            if (ch.blockTables().length != kv.groups()) {
                throw new IllegalArgumentException(ch.blockTables().length + " block tables for " + kv.groups() + " KV groups");
            }
            for (int g = 0; g < kv.groups(); g++) {
                checkTable(ch, ch.blockTables()[g], windowOfGroup[g], kv.slabs()[g], kv.layouts()[g]);
            }
            for (int t : ch.tokens()) {
                if (t < 0 || t >= c.vocabSize()) {
                    throw new IllegalArgumentException("token id " + t + " is outside the vocabulary of " + c.vocabSize());
                }
            }
            tokens += ch.tokens().length;
        }
        return tokens;
    }

    /**
     * Checks that the groups fit the model; returns per group the widest window of its layers (0
     * if one of them attends over the whole sequence: a one-group model's group may hold both).
     */
    private static int[] windows(PagedKv kv, ModelConfig c, ArchSpec spec) {
        if (kv.layers() != c.layers()) {
            throw new IllegalArgumentException("KV layout " + (kv.groups() == 1 ? kv.layouts()[0] : kv.layers() + " layers in "
                    + kv.groups() + " groups") + " does not fit model " + c);
        }
        int[] window = new int[kv.groups()];
        int[] layers = new int[kv.groups()];
        java.util.Arrays.fill(window, -1);
        for (int l = 0; l < c.layers(); l++) {
            int g = kv.groupOfLayer()[l];
            int w = spec.window(l);
            window[g] = window[g] < 0 ? w : (window[g] == 0 || w == 0 ? 0 : Math.max(window[g], w));
            layers[g]++;
        }
        for (int g = 0; g < kv.groups(); g++) {
            KvLayout layout = kv.layouts()[g];
            if (layout.layers() != layers[g] || layout.kvHeads() != c.kvHeads() || layout.headDim() != c.headDim()) {
                throw new IllegalArgumentException("KV layout " + layout + " of group " + g + " does not fit model " + c);
            }
        }
        return window;
    }

    /** Checks that {@code table} names slab blocks for every position the chunk reads or writes in a group of {@code window}. */
    private static void checkTable(SequenceChunk ch, int[] table, int window, MemorySegment slab, KvLayout layout) {
        long slabBlocks = slab.byteSize() / layout.bytesPerBlock();
        int blocks = layout.blocksFor(ch.lastPos() + 1L);
        if (table.length < blocks) {
            throw new IllegalArgumentException("block table of " + table.length
                    + " blocks does not cover position " + ch.lastPos() + " (needs " + blocks + ")");
        }
        int first = window > 0 ? Math.max(0, ch.startPos() - window + 1) / layout.blockSize() : 0;
        for (int b = first; b < blocks; b++) {
            int id = table[b];
            if (id < 0 || id >= slabBlocks) {
                throw new IllegalArgumentException("block id " + id + " is outside the slab of " + slabBlocks + " blocks");
            }
        }
    }
}

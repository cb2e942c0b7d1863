package io.kvtier.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.kv.KvGroup;
import io.kvtier.kv.KvGroups;
import io.kvtier.kv.KvLayout;
import io.kvtier.model.gguf.LlamaCppReference;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ForkJoinPool;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The transformer over KV kept per group: the gemma3 fixture (window 16, layers 0-4 sliding,
 * layer 5 global) runs one sequence into one slab holding every layer, and into two group slabs:
 * the full group (layer 5) with a block per position block, the window group (layers 0-4) in a
 * ring of only 3 blocks, whose table names no block (-1) before the window of the step's first
 * query. The prompt is computed 16 tokens a step (one block), then 24 decode steps: the logits of
 * both must be bit-identical at every step (scalar kernels), so each layer reads and writes its
 * own group's slab at its own layer offset and a window layer needs nothing before its window.
 */
class GroupedKvTest {

    static final int BLOCK = 16;
    static final int PROMPT = 96;
    static final int STEPS = 24;
    static final int RING = 3;

    @Test
    void twoGroupSlabsGiveTheOneSlabsLogitsBitForBit(@TempDir Path cache) {
        LlamaCppReference ref = LlamaCppReference.load(LlamaCppReference.folder().resolve("gemma3-spm515-f32.ref.jsonl")).get(2);
        try (ForkJoinPool pool = new ForkJoinPool(2);
             Model m = Models.load(LlamaCppReference.folder().resolve("gemma3-spm515-f32.gguf"), new DigestCache(cache));
             Transformer t = new Transformer(m, Kernels.scalar(), pool);
             Arena arena = Arena.ofShared()) {
            int layers = m.config().layers();
            int[] windows = new int[layers];
            for (int l = 0; l < layers; l++) windows[l] = m.spec().window(l);
            List<KvGroup> groups = KvGroups.of(windows);
            assertThat(groups).hasSize(2);
            assertThat(groups.get(0).layers()).containsExactly(5);
            assertThat(groups.get(1).layers()).containsExactly(0, 1, 2, 3, 4);
            KvLayout all = m.config().kvLayout(BLOCK);
            KvLayout full = new KvLayout(1, all.kvHeads(), all.headDim(), BLOCK);
            KvLayout window = new KvLayout(5, all.kvHeads(), all.headDim(), BLOCK);
            int blocks = all.blocksFor(PROMPT + STEPS + 1);
            int[] table = new int[blocks];
            for (int b = 0; b < blocks; b++) table[b] = blocks - 1 - b;
            MemorySegment one = arena.allocate(all.bytesPerBlock() * blocks, 64);
            MemorySegment fullSlab = arena.allocate(full.bytesPerBlock() * blocks, 64);
            MemorySegment windowSlab = arena.allocate(window.bytesPerBlock() * RING, 64);
            PagedKv grouped = PagedKv.of(groups, List.of(fullSlab, windowSlab), List.of(full, window));
            int[] prompt = Arrays.copyOf(ref.promptIds(), PROMPT);
            float[] a = null;
            float[] b = null;
            for (int start = 0; start < PROMPT; start += BLOCK) {
                int[] tokens = Arrays.copyOfRange(prompt, start, start + BLOCK);
                a = t.forward(List.of(new SequenceChunk(tokens, start, table, true)), one, all)[0];
                b = t.forward(List.of(new SequenceChunk(tokens, start, new int[][] {table, ring(start, blocks)}, true)),
                        grouped)[0];
                assertThat(b).as("prompt block at %d", start).containsExactly(a);
            }
            for (int s = 0, next = PROMPT; s < STEPS; s++, next++) {
                int[] token = {LogitsDriver.argmax(a)};
                a = t.forward(List.of(new SequenceChunk(token, next, table, true)), one, all)[0];
                b = t.forward(List.of(new SequenceChunk(token, next, new int[][] {table, ring(next, blocks)}, true)),
                        grouped)[0];
                assertThat(b).as("step %d at position %d", s, next).containsExactly(a);
            }
            int[][] holey = {table, ring(PROMPT, blocks)};
            holey[1][(PROMPT - BLOCK + 1) / BLOCK] = -1;
            assertThatThrownBy(() -> t.forward(List.of(new SequenceChunk(new int[] {1}, PROMPT, holey, true)), grouped))
                    .as("a window block the query reads").isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("block id -1");
        }
    }

    /** The window group's table for a chunk starting at {@code start}: a ring of 3 blocks from the window's first block on, -1 before. */
    private static int[] ring(int start, int blocks) {
        int[] t = new int[blocks];
        Arrays.fill(t, -1);
        for (int i = Math.max(0, start - BLOCK + 1) / BLOCK; i < blocks; i++) t[i] = i % RING;
        return t;
    }
}

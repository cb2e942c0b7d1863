package io.kvtier.model;

import static org.assertj.core.api.Assertions.assertThat;

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
 * Sliding-window attention reads nothing outside its window. The gemma3 fixture (window 16,
 * layers 0-4 sliding, layer 5 global) runs one sequence into two slabs; before every decode step,
 * every K and V slot of the sliding layers at a position the next query must not see
 * ({@code < p - 15}) is overwritten with NaN in the second slab. The logits of both slabs must be
 * bit-identical at every step: a single read of a poisoned slot would make them NaN. The control
 * poisons one old slot of the global layer, which must reach the logits. Scalar kernels: the
 * vector kernels' lane reductions may sum in another order once JIT-compiled, so two equal calls
 * need not agree to the bit.
 */
class SlidingWindowTest {

    static final int BLOCK = 16;
    static final int PROMPT = 100;
    static final int STEPS = 24;

    @Test
    void slotsBeforeTheWindowAreNeverRead(@TempDir Path cache) {
        LlamaCppReference ref = LlamaCppReference.load(LlamaCppReference.folder().resolve("gemma3-spm515-f32.ref.jsonl")).get(2);
        try (ForkJoinPool pool = new ForkJoinPool(2);
             Model m = Models.load(LlamaCppReference.folder().resolve("gemma3-spm515-f32.gguf"), new DigestCache(cache));
             Transformer t = new Transformer(m, Kernels.scalar(), pool);
             Arena arena = Arena.ofShared()) {
            ArchSpec spec = m.spec();
            assertThat(spec.window(0)).isEqualTo(16);
            assertThat(spec.window(4)).isEqualTo(16);
            assertThat(spec.window(5)).isZero();
            KvLayout layout = m.config().kvLayout(BLOCK);
            int blocks = layout.blocksFor(PROMPT + STEPS + 1);
            int[] table = new int[blocks];
            for (int b = 0; b < blocks; b++) table[b] = blocks - 1 - b;
            MemorySegment clean = arena.allocate(layout.bytesPerBlock() * blocks, 64);
            MemorySegment poisoned = arena.allocate(layout.bytesPerBlock() * blocks, 64);
            int[] prompt = Arrays.copyOf(ref.promptIds(), PROMPT);
            float[] a = step(t, clean, layout, table, prompt, 0);
            float[] b = step(t, poisoned, layout, table, prompt, 0);
            assertThat(b).containsExactly(a);
            int next = PROMPT;
            for (int s = 0; s < STEPS; s++, next++) {
                for (int l = 0; l < m.config().layers(); l++) {
                    if (spec.window(l) > 0) {
                        for (int p = 0; p < next - spec.window(l) + 1; p++) {
                            poison(poisoned, layout, table, l, p);
                        }
                    }
                }
                int token = LogitsDriver.argmax(a);
                a = step(t, clean, layout, table, new int[] {token}, next);
                b = step(t, poisoned, layout, table, new int[] {token}, next);
                assertThat(b).as("step %d at position %d", s, next).containsExactly(a);
                assertThat(a[token]).isFinite();
            }
            poison(poisoned, layout, table, 5, 3);
            float[] control = step(t, poisoned, layout, table, new int[] {LogitsDriver.argmax(a)}, next);
            assertThat(control[0]).as("a poisoned slot of the global layer reaches the logits").isNaN();
        }
    }

    private static float[] step(Transformer t, MemorySegment slab, KvLayout layout, int[] table, int[] tokens, int start) {
        return t.forward(List.of(new SequenceChunk(tokens, start, table, true)), slab, layout)[0];
    }

    /** K and V of position {@code p} in {@code layer}: NaN. */
    private static void poison(MemorySegment slab, KvLayout layout, int[] table, int layer, int p) {
        long base = table[p / BLOCK] * layout.bytesPerBlock();
        for (int kv = 0; kv < 2; kv++) {
            MemorySegment.copy(nans(layout.kvDim()), 0, slab, ScalarKernels.F32,
                    base + layout.byteOffset(layer, kv, p % BLOCK), layout.kvDim());
        }
    }

    private static float[] nans(int n) {
        float[] f = new float[n];
        Arrays.fill(f, Float.NaN);
        return f;
    }
}

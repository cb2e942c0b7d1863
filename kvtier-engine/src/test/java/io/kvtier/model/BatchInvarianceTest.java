package io.kvtier.model;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.kv.KvLayout;
import io.kvtier.model.gguf.LlamaCppReference;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ForkJoinPool;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The batch-invariant mode ({@link Transformer#BATCH_INVARIANT}): a sequence's greedy tokens and
 * the bits of its logits are the same whether its prompt is fed one token per step alone, or as
 * one chunk beside another sequence's chunk and then decoded beside it; and the same in the
 * JVM's first (interpreted, C1) steps as after warm-up (C2). No warm-up before the first run:
 * every model type of {@code models/gguf-ref} and stories260K (one case each, in that order), on 2
 * threads.
 */
class BatchInvarianceTest {

    private static final int BLOCK = 16;
    private static final int STEPS = 6;
    private static final String[] GGUF = {"llama-spm512-f32", "llama-spm512-f16", "llama-spm512-bf16", "llama-spm512-q8_0",
        "llama-spm512-q4_0", "llama-spm512-q4_k", "qwen2-bpe-q8_0", "llama3-bpe-q8_0", "qwen3-bpe-f16", "gemma3-spm515-f32"};

    /** Greedy tokens and each step's logits (the last prompt position's first) of one sequence. */
    private record Run(int[] tokens, List<float[]> logits) {
    }

    /** The models, in this order (the first runs on a JVM whose kernels have never run). */
    static Stream<String> models() {
        return Stream.concat(Stream.of(GGUF), Stream.of("stories260K"));
    }

    private static ForkJoinPool pool;

    @BeforeAll
    static void startPool() {
        pool = new ForkJoinPool(2);
    }

    @AfterAll
    static void stopPool() {
        pool.close();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("models")
    void greedyTokensAndLogitBitsDoNotDependOnTheBatchOrTheJitTier(String name) {
        if (name.equals("stories260K")) {
            try (Model m = Checkpoint.load(SharedFiles.stories260K())) {
                check(name, m, new int[] {1, 403, 407, 261, 378, 300, 45, 9, 410}, new int[] {1, 68, 300, 91});
            }
            return;
        }
        Path f = LlamaCppReference.folder().resolve(name + ".gguf");
        List<LlamaCppReference> refs = LlamaCppReference.load(LlamaCppReference.folder().resolve(name + ".ref.jsonl"));
        try (Model m = Models.load(f)) {
            check(name, m, refs.get(0).promptIds(), refs.get(1).promptIds());
        }
    }

    private static void check(String name, Model m, int[] prompt, int[] companion) {
        try (Transformer t = new Transformer(m, Kernels.best(), pool, QuantActivations.Q8_0, true)) {
            assertThat(t.batchInvariant()).isTrue();
            Run cold = alone(t, prompt);                  // the JVM's first steps on this model's kernels
            Run batched = beside(t, prompt, companion);
            for (int i = 0; i < 3; i++) {
                beside(t, prompt, companion);             // warm-up: the kernels reach C2
            }
            Run warm = alone(t, prompt);
            Run warmBatched = beside(t, prompt, companion);
            for (Run r : List.of(batched, warm, warmBatched)) {
                assertThat(r.tokens()).as(name + " greedy tokens").containsExactly(cold.tokens());
                assertThat(r.logits()).hasSize(STEPS + 1);
                for (int s = 0; s <= STEPS; s++) {
                    assertSameBits(name + " logits of step " + s, cold.logits().get(s), r.logits().get(s));
                }
            }
        }
    }

    /**
     * Bit equality of two logit rows without AssertJ's element-wise machinery, which boxes and
     * formats every float (over a minute on qwen's 151,936-entry rows); a failure names the first
     * differing index and both values.
     */
    static void assertSameBits(String what, float[] expected, float[] actual) {
        assertThat(actual.length).as(what + ": length").isEqualTo(expected.length);
        int[] e = new int[expected.length];
        int[] a = new int[actual.length];
        for (int i = 0; i < e.length; i++) {
            e[i] = Float.floatToRawIntBits(expected[i]);
            a[i] = Float.floatToRawIntBits(actual[i]);
        }
        int at = Arrays.mismatch(e, a);
        if (at >= 0) {
            throw new AssertionError(what + ": first differing logit at index " + at + " of " + e.length + ": expected "
                    + expected[at] + " (bits " + Integer.toHexString(e[at]) + "), got " + actual[at] + " (bits "
                    + Integer.toHexString(a[at]) + ")");
        }
    }

    /** {@code prompt} fed one token per step, alone, then {@link #STEPS} greedy steps. */
    private static Run alone(Transformer t, int[] prompt) {
        KvLayout layout = t.config().kvLayout(BLOCK);
        int[] table = table(0, prompt.length + STEPS);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment slab = arena.allocate(layout.bytesPerBlock() * table.length, 64);
            float[] logits = null;
            for (int p = 0; p < prompt.length; p++) {
                logits = t.forward(List.of(new SequenceChunk(new int[] {prompt[p]}, p, table, true)), slab, layout)[0];
            }
            return decode(logits, prompt.length, step -> t.forward(List.of(step), slab, layout)[0], table);
        }
    }

    /**
     * {@code prompt} as one chunk beside {@code companion}'s chunk in one step, then both decoded
     * greedily in the same steps; the run of {@code prompt}.
     */
    private static Run beside(Transformer t, int[] prompt, int[] companion) {
        KvLayout layout = t.config().kvLayout(BLOCK);
        int[] table = table(0, prompt.length + STEPS);
        int[] other = table(table.length, companion.length + STEPS);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment slab = arena.allocate(layout.bytesPerBlock() * (table.length + other.length), 64);
            float[][] first = t.forward(List.of(new SequenceChunk(companion, 0, other, true),
                    new SequenceChunk(prompt, 0, table, true)), slab, layout);
            int[] otherToken = {argmax(first[0])};
            int[] otherPos = {companion.length};
            return decode(first[1].clone(), prompt.length, step -> {
                float[][] out = t.forward(List.of(new SequenceChunk(otherToken, otherPos[0], other, true), step), slab, layout);
                otherToken[0] = argmax(out[0]);
                otherPos[0]++;
                return out[1];
            }, table);
        }
    }

    private interface Step {
        float[] run(SequenceChunk chunk);
    }

    private static Run decode(float[] logits, int pos, Step step, int[] table) {
        int[] tokens = new int[STEPS];
        List<float[]> all = new ArrayList<>();
        all.add(logits.clone());
        for (int s = 0; s < STEPS; s++) {
            tokens[s] = argmax(logits);
            logits = step.run(new SequenceChunk(new int[] {tokens[s]}, pos + s, table, true));
            all.add(logits.clone());
        }
        return new Run(tokens, all);
    }

    private static int[] table(int first, int positions) {
        int[] t = new int[(positions + BLOCK - 1) / BLOCK];
        for (int i = 0; i < t.length; i++) t[i] = first + i;
        return t;
    }

    private static int argmax(float[] x) {
        int best = 0;
        for (int i = 1; i < x.length; i++) {
            if (x[i] > x[best]) best = i;
        }
        return best;
    }
}

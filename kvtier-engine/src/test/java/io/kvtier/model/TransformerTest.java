package io.kvtier.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ForkJoinPool;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class TransformerTest {

    private static Checkpoint checkpoint;
    private static ForkJoinPool pool;
    private static List<SharedFiles.Reference> refs;

    @BeforeAll
    static void load() {
        checkpoint = Checkpoint.load(SharedFiles.stories260K());
        pool = new ForkJoinPool(2);
        refs = SharedFiles.greedyReferences();
    }

    @AfterAll
    static void close() {
        pool.shutdownNow();
        checkpoint.close();
    }

    @ParameterizedTest(name = "{0} threads")
    @ValueSource(ints = {1, 2})
    void reproducesEveryReferenceRecordWithVectorKernels(int threads) {
        assertReproducesAll(Kernels.best(), threads);
    }

    @ParameterizedTest(name = "{0} threads")
    @ValueSource(ints = {1, 2})
    void reproducesEveryReferenceRecordWithScalarKernels(int threads) {
        assertReproducesAll(Kernels.scalar(), threads);
    }

    private static void assertReproducesAll(Kernels kernels, int threads) {
        ForkJoinPool own = new ForkJoinPool(threads);
        try (Transformer model = new Transformer(checkpoint, kernels, own);
             GreedyDriver driver = new GreedyDriver(model, 16, 1)) {
            for (SharedFiles.Reference r : refs) {
                assertThat(driver.generate(r.promptIds(), r.steps(), r.promptIds().length))
                        .as("%s, %d threads, prompt '%s'", kernels.name(), threads, r.prompt())
                        .containsExactly(r.generatedIds());
            }
        } finally {
            own.shutdownNow();
        }
    }

    /**
     * Every row of every split product and every attention head is computed once, by one thread,
     * with its own scratch: logits must not depend on the thread count, bit for bit (prefill chunks
     * make the fused q/k/v and gate/up, the classifier and attention large enough to be split).
     * Scalar kernels, because the vector ones' lane reductions may sum in another order before
     * and after the JIT compiles them, which would differ between runs of one thread count too.
     */
    @Test
    void logitsAreBitIdenticalAtOneTwoAndThreeThreads() {
        int[] prompt = refs.get(5).promptIds();
        List<float[]> first = null;
        for (int threads : new int[] {1, 2, 3}) {
            ForkJoinPool own = new ForkJoinPool(threads);
            List<float[]> logits = new ArrayList<>();
            try (Transformer model = new Transformer(checkpoint, Kernels.scalar(), own);
                 LogitsDriver driver = new LogitsDriver(model, 16, prompt.length + 9 + 8)) {
                logits.add(driver.feed(java.util.Arrays.copyOf(prompt, prompt.length)));
                logits.add(driver.feed(1, 403, 407, 261, 29, 30, 31, 32, 33));
                for (int i = 0; i < 8; i++) {
                    logits.add(driver.feed(GreedyDriver.argmax(logits.getLast())));
                }
            } finally {
                own.shutdownNow();
            }
            if (first == null) {
                first = logits;
            } else {
                for (int i = 0; i < first.size(); i++) {
                    assertThat(logits.get(i)).as("%d threads, step %d", threads, i).containsExactly(first.get(i));
                }
            }
        }
    }

    /**
     * The residual adds and SwiGLU done by each part on the rows it computed (inside the
     * products' ranges) give the same logits, bit for bit, as done by the calling thread after
     * each range, and q/k/v with attention kv head by kv head give what the separate products
     * and attention give; every product and attention is split (threshold 0) so that both
     * threads run parts. A decode step at 2 threads hands off exactly 4 ranges per layer (q/k/v
     * with attention, o with its residual, gate/up with SwiGLU, down with its residual) and the
     * classifier, against 5 per layer unfused.
     */
    @Test
    void fusedStepsGiveTheSameLogitsWithFourHandOffsPerLayer() {
        int[] prompt = refs.get(5).promptIds();
        ForkJoinPool own = new ForkJoinPool(2);
        Parallel fusedPool = new Parallel(own, Parallel.SPIN_NANOS, 0);
        Parallel unfusedPool = new Parallel(own, Parallel.SPIN_NANOS, 0);
        try (Transformer fused = new Transformer(checkpoint, Kernels.scalar(), fusedPool, true);
             Transformer unfused = new Transformer(checkpoint, Kernels.scalar(), unfusedPool, false);
             LogitsDriver a = new LogitsDriver(fused, 16, prompt.length + 9);
             LogitsDriver b = new LogitsDriver(unfused, 16, prompt.length + 9)) {
            assertThat(a.feed(prompt)).as("prefill").containsExactly(b.feed(prompt));
            int token = 1;
            for (int i = 0; i < 8; i++) {
                long before = fusedPool.splits();
                long beforeUnfused = unfusedPool.splits();
                float[] logits = a.feed(token);
                assertThat(logits).as("decode step %d", i).containsExactly(b.feed(token));
                assertThat(fusedPool.splits() - before).as("hand-offs of decode step %d", i)
                        .isEqualTo(4L * checkpoint.config().layers() + 1);
                assertThat(unfusedPool.splits() - beforeUnfused).as("hand-offs of decode step %d, unfused", i)
                        .isEqualTo(5L * checkpoint.config().layers() + 1);
                token = GreedyDriver.argmax(logits);
            }
        } finally {
            own.shutdownNow();
        }
    }

    @ParameterizedTest(name = "block size {0}, prefill chunk {1}")
    @CsvSource({"1, 1", "1, 64", "4, 7", "16, 1", "16, 7", "16, 64", "64, 7", "64, 64", "4, 64", "64, 1"})
    void blockSizeAndPrefillChunkDoNotChangeTokens(int blockSize, int prefillChunk) {
        try (Transformer model = new Transformer(checkpoint, Kernels.best(), pool);
             GreedyDriver driver = new GreedyDriver(model, blockSize, 1)) {
            for (SharedFiles.Reference r : List.of(refs.get(3), refs.get(7))) {
                assertThat(driver.generate(r.promptIds(), r.steps(), prefillChunk))
                        .as("prompt '%s'", r.prompt())
                        .containsExactly(r.generatedIds());
            }
        }
    }

    @Test
    void allSequencesInOneBatchGiveTheSameTokensAsEachAlone() {
        // A shared slab, so that attention of the batch is also split across the pool's threads.
        List<int[]> prompts = new ArrayList<>();
        int[] steps = new int[refs.size()];
        for (int i = 0; i < refs.size(); i++) {
            prompts.add(refs.get(i).promptIds());
            steps[i] = refs.get(i).steps();
        }
        try (Transformer model = new Transformer(checkpoint, Kernels.best(), pool);
             GreedyDriver driver = new GreedyDriver(model, 16, refs.size(), java.lang.foreign.Arena.ofShared())) {
            List<int[]> out = driver.generateAll(prompts, steps, 13);
            for (int i = 0; i < refs.size(); i++) {
                assertThat(out.get(i)).as("prompt '%s'", refs.get(i).prompt()).containsExactly(refs.get(i).generatedIds());
            }
        }
    }

    @Test
    void shuffledBlockTablesGiveTheSameTokens() {
        long seed = 20240611L;
        List<int[]> prompts = List.of(refs.get(1).promptIds(), refs.get(6).promptIds());
        int[] steps = {refs.get(1).steps(), refs.get(6).steps()};
        try (Transformer model = new Transformer(checkpoint, Kernels.best(), pool);
             GreedyDriver driver = new GreedyDriver(model, 4, 2).shuffledBlocks(seed)) {
            List<int[]> out = driver.generateAll(prompts, steps, 5);
            assertThat(out.get(0)).as("seed %d", seed).containsExactly(refs.get(1).generatedIds());
            assertThat(out.get(1)).as("seed %d", seed).containsExactly(refs.get(6).generatedIds());
        }
    }

    @Test
    void chunksWithoutLogitsReturnNull() {
        try (Transformer model = new Transformer(checkpoint, Kernels.best(), pool);
             java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
            var layout = checkpoint.config().kvLayout(16);
            var slab = arena.allocate(layout.bytesPerBlock() * 4);
            float[][] out = model.forward(List.of(
                    new SequenceChunk(new int[] {1, 403}, 0, new int[] {0}, false),
                    new SequenceChunk(new int[] {1, 403, 407}, 0, new int[] {1}, true)), slab, layout);
            assertThat(out[0]).isNull();
            assertThat(out[1]).hasSize(512);
            assertThat(GreedyDriver.argmax(out[1])).isEqualTo(261);   // "Once upon" -> " a"
        }
    }

    /**
     * With {@link Transformer#reuseLogitArrays} a step returns the logits of a fresh transformer,
     * bit for bit, for one sequence (the classifier writes straight into the returned array) and
     * for two (copied into kept arrays), and the next steps return the same array objects, so a
     * step allocates no {@code [vocab]} arrays.
     */
    @Test
    void reusedLogitArraysHoldTheSameValuesAndAreKeptAcrossSteps() {
        try (Transformer copying = new Transformer(checkpoint, Kernels.best(), pool);
             Transformer reusing = new Transformer(checkpoint, Kernels.best(), pool);
             java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
            reusing.reuseLogitArrays();
            var layout = checkpoint.config().kvLayout(16);
            var slab = arena.allocate(layout.bytesPerBlock() * 4);
            List<List<SequenceChunk>> steps = List.of(
                    List.of(new SequenceChunk(new int[] {1, 403}, 0, new int[] {0}, true)),
                    List.of(new SequenceChunk(new int[] {407}, 2, new int[] {0}, true)),
                    List.of(new SequenceChunk(new int[] {1, 403, 407}, 0, new int[] {1}, true),
                            new SequenceChunk(new int[] {261}, 3, new int[] {0}, false)),
                    List.of(new SequenceChunk(new int[] {261}, 3, new int[] {1}, true),
                            new SequenceChunk(new int[] {1, 365}, 4, new int[] {0}, true)),
                    List.of(new SequenceChunk(new int[] {263}, 4, new int[] {1}, true),
                            new SequenceChunk(new int[] {364}, 6, new int[] {0}, true)));
            float[][] previous = null;
            for (int i = 0; i < steps.size(); i++) {
                float[][] want = copying.forward(steps.get(i), slab, layout);
                float[][] got = reusing.forward(steps.get(i), slab, layout);
                for (int c = 0; c < want.length; c++) {
                    if (want[c] == null) {
                        assertThat(got[c]).as("step %d chunk %d", i, c).isNull();
                    } else {
                        assertThat(got[c]).as("step %d chunk %d", i, c).hasSize(512).containsExactly(want[c]);
                    }
                }
                for (int c = 0; previous != null && c < Math.min(got.length, previous.length); c++) {
                    if (got[c] != null && previous[c] != null) {
                        assertThat(got[c]).as("step %d chunk %d: the array of step %d", i, c, i - 1).isSameAs(previous[c]);
                    }
                }
                previous = got;
            }
        }
    }

    /**
     * The classifier's parts cap and copy out the logit columns they computed (one range for the
     * product and the copies): every row of a batch holds its own sequence's logits, bit for bit
     * those of one thread (one part, all columns) when every range is split over three threads,
     * with kept arrays and with fresh ones.
     */
    @Test
    void batchedLogitRowsAreCopiedOutWholeWhenTheClassifierIsSplit() {
        ForkJoinPool three = new ForkJoinPool(3);
        ForkJoinPool one = new ForkJoinPool(1);
        try (Transformer single = new Transformer(checkpoint, Kernels.scalar(), new Parallel(one, 0, 0));
             Transformer split = new Transformer(checkpoint, Kernels.scalar(), new Parallel(three, 0, 0));
             Transformer splitKept = new Transformer(checkpoint, Kernels.scalar(), new Parallel(three, 0, 0));
             java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofShared()) {
            splitKept.reuseLogitArrays();
            var layout = checkpoint.config().kvLayout(16);
            var slab = arena.allocate(layout.bytesPerBlock() * 3);
            List<SequenceChunk> batch = List.of(new SequenceChunk(new int[] {1, 403, 407}, 0, new int[] {0}, true),
                    new SequenceChunk(new int[] {1, 365, 300}, 0, new int[] {1}, true),
                    new SequenceChunk(new int[] {1, 29}, 0, new int[] {2}, true));
            float[][] want = single.forward(batch, slab, layout);
            float[][] got = split.forward(batch, slab, layout);
            float[][] kept = splitKept.forward(batch, slab, layout);
            for (int c = 0; c < batch.size(); c++) {
                assertThat(got[c]).as("chunk %d", c).hasSize(512).containsExactly(want[c]);
                assertThat(kept[c]).as("chunk %d, kept arrays", c).hasSize(512).containsExactly(want[c]);
            }
            assertThat(GreedyDriver.argmax(want[0])).isEqualTo(261);   // "Once upon" -> " a"
            assertThat(want[1]).isNotEqualTo(want[0]);
            assertThat(want[2]).isNotEqualTo(want[1]);
        } finally {
            three.shutdownNow();
            one.shutdownNow();
        }
    }

    @Test
    void rejectsBlockTablesThatDoNotCoverTheChunkOrLeaveTheSlab() {
        try (Transformer model = new Transformer(checkpoint, Kernels.best(), pool);
             java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
            var layout = checkpoint.config().kvLayout(4);
            var slab = arena.allocate(layout.bytesPerBlock() * 2);
            assertThatThrownBy(() -> model.forward(
                    List.of(new SequenceChunk(new int[] {1, 2, 3, 4, 5}, 0, new int[] {0}, true)), slab, layout))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("does not cover position 4");
            assertThatThrownBy(() -> model.forward(
                    List.of(new SequenceChunk(new int[] {1}, 0, new int[] {2}, true)), slab, layout))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("block id 2 is outside");
            assertThatThrownBy(() -> model.forward(
                    List.of(new SequenceChunk(new int[] {512}, 0, new int[] {0}, true)), slab, layout))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("token id 512");
            assertThatThrownBy(() -> model.forward(List.of(new SequenceChunk(new int[] {1}, 0, new int[] {0}, true)),
                    slab, new io.kvtier.kv.KvLayout(5, 8, 8, 4)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("does not fit model");
        }
    }
}

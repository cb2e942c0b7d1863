package io.kvtier.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.kv.BlockPool;
import io.kvtier.kv.ExtraKeys;
import io.kvtier.kv.KvCacheManager;
import io.kvtier.model.Kernels;
import io.kvtier.model.Models;
import io.kvtier.model.DigestCache;
import io.kvtier.model.gguf.LlamaCppReference;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The engine on KV groups with the gemma3 fixture (window 16, layers 0-4 sliding, layer 5
 * global, blocks of 16): a full group of one layer and a window group of five, each in its own
 * device pool. After every step each running request's window table holds exactly the blocks its
 * next query reads (at most 2 with W = B = 16) and the full table every block; outputs stay
 * llama.cpp's greedy tokens; a device hit is the longest prefix both groups serve.
 */
class Gemma3KvGroupsTest {

    static final List<LlamaCppReference> REFS = Gemma3EngineTest.REFS;

    @TempDir
    Path tmp;

    private Engine engine(EngineConfig config) {
        return LlamaRunner.engine(Models.load(Gemma3EngineTest.MODEL, new DigestCache(tmp)), config.withStopToken(-1),
                Kernels.best(), 2);
    }

    @Test
    void windowTablesHoldOnlyTheWindowAtEveryStep() {
        try (Engine e = engine(EngineConfig.of(16, 64).withMaxBatchTokens(48))) {
            KvCacheManager kv = e.kvCacheManager();
            assertThat(kv.groups()).hasSize(2);
            assertThat(kv.groups().get(0).window()).isZero();
            assertThat(kv.groups().get(0).layers()).containsExactly(5);
            assertThat(kv.groups().get(1).window()).isEqualTo(16);
            assertThat(kv.groups().get(1).layers()).containsExactly(0, 1, 2, 3, 4);
            assertThat(kv.pool(0).layout().layers()).isEqualTo(1);
            assertThat(kv.pool(1).layout().layers()).isEqualTo(5);
            List<Request> rs = new ArrayList<>();
            for (int i = 0; i < REFS.size(); i++) {
                rs.add(new Request(i, REFS.get(i).promptIds(), 32, SamplingParams.GREEDY, ExtraKeys.NONE));
                e.submit(rs.getLast());
            }
            int peakFull = 0;
            int peakWindow = 0;
            int steps = 0;
            while (e.hasWork()) {
                e.step();
                steps++;
                e.checkKvInvariants();
                int window = 0;
                for (Request r : e.scheduler().running()) {
                    int held = kv.heldBlocks(r.id(), 1);
                    assertThat(held).as("request %d at position %d, step %d", r.id(), r.numComputed(), steps)
                            .isBetween(1, 2);
                    assertThat(kv.heldBlocks(r.id(), 0)).isEqualTo((r.numComputed() + 15) / 16);
                    window += held;
                }
                assertThat(inUse(kv.pool(1))).as("the window pool holds only running requests' windows").isEqualTo(window);
                peakFull = Math.max(peakFull, inUse(kv.pool(0)));
                peakWindow = Math.max(peakWindow, inUse(kv.pool(1)));
            }
            for (int i = 0; i < rs.size(); i++) {
                assertThat(rs.get(i).outputIds()).as("prompt %s", REFS.get(i).promptKind())
                        .containsExactly(REFS.get(i).generatedIds());
            }
            // 422 + 31 positions of the long prompt alone fill 29 full-group blocks; no window holds more than 2.
            assertThat(peakFull).isGreaterThanOrEqualTo(29);
            assertThat(peakWindow).isLessThanOrEqualTo(2 * REFS.size());
            assertThat(e.kvCacheManager().activeRequests()).isZero();
        }
    }

    /**
     * The long prompt runs, then every cached block of the window group is evicted (the pool
     * hands all its free blocks out and takes them back without keys): the full group still holds
     * the whole prefix, but no window ending at a hit is on the device, so the longer request gets
     * no device hit and recomputes everything, with llama.cpp's tokens. Before the eviction the
     * same request would hit 26 blocks ({@link Gemma3EngineTest}).
     */
    @Test
    void aHitTheWindowGroupCannotServeIsNotTaken() {
        LlamaCppReference ref = REFS.get(2);
        try (Engine e = engine(EngineConfig.of(16, 128))) {
            Request first = new Request(0, ref.promptIds(), 32, SamplingParams.GREEDY, ExtraKeys.NONE);
            e.submit(first);
            e.runToCompletion();
            int[] longer = Arrays.copyOf(ref.promptIds(), ref.promptIds().length + 10);
            System.arraycopy(ref.generatedIds(), 0, longer, ref.promptIds().length, 10);
            Request second = new Request(1, longer, 22, SamplingParams.GREEDY, ExtraKeys.NONE);
            KvCacheManager kv = e.kvCacheManager();
            BlockPool window = kv.pool(1);
            assertThat(window.cachedCount()).as("window blocks left to the prefix cache").isEqualTo(28);
            int[] taken = new int[window.freeCount()];
            for (int i = 0; i < taken.length; i++) taken[i] = window.allocate();
            for (int b : taken) window.release(b);
            assertThat(window.cachedCount()).isZero();
            assertThat(kv.pool(0).cachedCount()).as("the full group keeps the prefix").isEqualTo(28);
            e.submit(second);
            e.runToCompletion();
            assertThat(second.deviceHitTokens()).as("device hit").isZero();
            assertThat(second.outputIds()).containsExactly(Arrays.copyOfRange(ref.generatedIds(), 10, 32));
        }
    }

    private static int inUse(BlockPool pool) {
        return pool.numBlocks() - pool.freeCount();
    }
}

package io.kvtier.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.engine.Engine;
import io.kvtier.engine.EngineConfig;
import io.kvtier.engine.ModelRunner;
import io.kvtier.engine.SamplingParams;
import io.kvtier.engine.ScheduledChunk;
import io.kvtier.kv.BlockHasher;
import io.kvtier.kv.BlockPool;
import io.kvtier.kv.KvLayout;
import io.kvtier.kv.Namespace;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The engine loop's thread is made ready to run steps before its first step ({@link ModelRunner#prepareThread}). */
class EngineLoopThreadTest {

    /** A test fake: logits that always pick token 3; records each call with its thread's name. */
    private static final class RecordingRunner implements ModelRunner {
        final List<String> calls = Collections.synchronizedList(new ArrayList<>());

        @Override
        public float[][] forward(List<ScheduledChunk> chunks) {
            calls.add("forward@" + Thread.currentThread().getName());
            float[][] out = new float[chunks.size()][];
            for (int i = 0; i < out.length; i++) {
                if (chunks.get(i).wantLogits()) {
                    out[i] = new float[8];
                    out[i][3] = 1f;
                }
            }
            return out;
        }

        @Override
        public void prepareThread() {
            calls.add("prepare@" + Thread.currentThread().getName());
        }

        @Override
        public int vocabSize() {
            return 8;
        }

        @Override
        public int maxPositions() {
            return 64;
        }
    }

    @Test
    void theLoopThreadIsPreparedOnceBeforeItsFirstStep() throws Exception {
        RecordingRunner runner = new RecordingRunner();
        BlockPool pool = new BlockPool(8, new KvLayout(2, 1, 4, 16));
        Engine engine = new Engine(new EngineConfig(16, 8, 512, 4, true, 1), pool, runner,
                BlockHasher.sha256(Namespace.of("loop-thread", pool.layout())));
        EngineLoop loop = new EngineLoop(engine, 4).start();
        try {
            CompletableFuture<int[]> tokens = new CompletableFuture<>();
            List<Integer> got = Collections.synchronizedList(new ArrayList<>());
            loop.submit(new GenerationRequest(new int[] {1, 5, 6}, 2, SamplingParams.GREEDY, null), new TokenSink() {
                @Override
                public void onTokens(int[] ids) {
                    for (int id : ids) {
                        got.add(id);
                    }
                }

                @Override
                public void onFinished(Outcome outcome) {
                    tokens.complete(got.stream().mapToInt(Integer::intValue).toArray());
                }

                @Override
                public void onFailed(String message) {
                    tokens.completeExceptionally(new AssertionError(message));
                }
            });
            assertThat(tokens.get(30, TimeUnit.SECONDS)).containsExactly(3, 3);
            String loopThread = loop.call(e -> Thread.currentThread().getName()).get(30, TimeUnit.SECONDS);
            assertThat(runner.calls).containsExactly("prepare@" + loopThread, "forward@" + loopThread, "forward@" + loopThread);
        } finally {
            loop.shutdown(Duration.ZERO);
        }
    }
}

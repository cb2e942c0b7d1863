package io.kvtier.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.offload.OffloadConfig;
import io.kvtier.server.EngineLoop;
import io.kvtier.server.GenerationRequest;
import io.kvtier.server.Outcome;
import io.kvtier.server.Rejected;
import io.kvtier.server.TokenSink;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The engine loop on the fingerprint model with a fault-injecting host tier (the offload soak's
 * fixture, hence this package): requests from many threads, aborts from others, ACCEPTANCE's
 * invariants checked after every step on the engine thread; shutdown with and without grace;
 * a dead engine thread.
 */
class EngineLoopTest {

    /** Records one request's sink calls; completes when the request ends. */
    static final class RecordingSink implements TokenSink {
        final List<Integer> tokens = new ArrayList<>();
        final CompletableFuture<Outcome> end = new CompletableFuture<>();
        int terminalCalls;

        @Override
        public synchronized void onTokens(int[] ids) {
            assertThat(end).as("tokens after the end").isNotDone();
            for (int id : ids) {
                tokens.add(id);
            }
        }

        @Override
        public synchronized void onFinished(Outcome outcome) {
            terminalCalls++;
            end.complete(outcome);
        }

        @Override
        public synchronized void onFailed(String message) {
            terminalCalls++;
            end.completeExceptionally(new IllegalStateException(message));
        }

        synchronized int[] ids() {
            return tokens.stream().mapToInt(Integer::intValue).toArray();
        }
    }

    private static OffloadFixture fixture(SplittableRandom rnd) {
        OffloadConfig oc = OffloadConfig.DEFAULT.withBlocksPerChunk(1 + rnd.nextInt(2));
        OffloadFixture f = new OffloadFixture(FingerprintEngines.config(4, 24).withMaxBatchTokens(32), 8, oc, "lru");
        SplittableRandom faults = rnd.split();
        f.transfers.reorder(true);
        f.transfers.failJobs(job -> faults.nextInt(20) == 0);
        f.transfers.delayJobs(job -> faults.nextInt(4) == 0, 1 + faults.nextInt(3));
        return f;
    }

    /** A loop whose every step is followed by the soak's invariant checks (on the engine thread). */
    private static EngineLoop loop(OffloadFixture f, int maxWaiting) {
        EngineLoop loop = new EngineLoop(f.engine, maxWaiting);
        loop.addStepListener((e, finished) -> f.checkInvariants());
        return loop.start();
    }

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {11, 22})
    void requestsFromManyThreadsWithAbortsKeepEveryInvariantAndMatchTheirReferences(long seed) throws Exception {
        SplittableRandom rnd = new SplittableRandom(seed);
        OffloadFixture f = fixture(rnd);
        EngineLoop loop = loop(f, 1000);
        List<int[]> prefixes = List.of(FingerprintEngines.range(1, 9), FingerprintEngines.range(20, 33), FingerprintEngines.range(40, 46));
        int n = 160;
        long[] ids = new long[n];
        int[][] prompts = new int[n][];
        int[] maxTokens = new int[n];
        RecordingSink[] sinks = new RecordingSink[n];
        SplittableRandom[] perThread = new SplittableRandom[n];
        for (int i = 0; i < n; i++) {
            perThread[i] = rnd.split();
        }
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < n; i++) {
                int k = i;
                pool.submit(() -> {
                    SplittableRandom r = perThread[k];
                    int[] prefix = prefixes.get(r.nextInt(prefixes.size()));
                    int[] prompt = Arrays.copyOf(prefix, prefix.length + r.nextInt(9));
                    for (int j = prefix.length; j < prompt.length; j++) {
                        prompt[j] = 1 + r.nextInt(FingerprintEngines.VOCAB - 1);
                    }
                    prompts[k] = prompt;
                    maxTokens[k] = 1 + r.nextInt(24);
                    sinks[k] = new RecordingSink();
                    ids[k] = loop.submit(new GenerationRequest(prompt, maxTokens[k], SamplingParams.GREEDY, null), sinks[k]);
                    if (r.nextInt(4) == 0) {
                        Thread.sleep(r.nextInt(3));
                        loop.abort(ids[k]); // as a departed client does, from its own thread
                    }
                    return null;
                });
            }
        }
        int aborted = 0;
        for (int i = 0; i < n; i++) {
            Outcome o = sinks[i].end.get(60, TimeUnit.SECONDS);
            int[] ref = FingerprintEngines.reference(prompts[i], maxTokens[i]);
            int[] got = sinks[i].ids();
            assertThat(got.length).isEqualTo(o.completionTokens());
            if (o.reason() == FinishReason.ABORT) {
                aborted++;
                assertThat(got).as("aborted request %d is a prefix of its reference", i)
                        .containsExactly(Arrays.copyOf(ref, got.length));
            } else {
                assertThat(got).as("request %d", i).containsExactly(ref);
            }
            assertThat(sinks[i].terminalCalls).isEqualTo(1);
        }
        assertThat(aborted).as("aborts").isPositive();
        loop.call(e -> {
            e.drainTransfers();
            f.checkInvariants();
            f.assertDrained();
            return null;
        }).get(60, TimeUnit.SECONDS);
        assertThat(loop.waitingCount()).isZero();
        loop.shutdown(Duration.ofSeconds(10));
        assertThat(loop.alive()).isFalse();
    }

    @Test
    void shutdownLetsRequestsFinishWithinTheGraceThenRefusesNewOnes() throws Exception {
        OffloadFixture f = fixture(new SplittableRandom(5));
        EngineLoop loop = loop(f, 100);
        List<RecordingSink> sinks = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            RecordingSink s = new RecordingSink();
            loop.submit(new GenerationRequest(FingerprintEngines.nonStopping(1 + i, 9, 40), 40, SamplingParams.GREEDY, null), s);
            sinks.add(s);
        }
        loop.shutdown(Duration.ofSeconds(60));
        for (RecordingSink s : sinks) {
            assertThat(s.end.get(1, TimeUnit.SECONDS).reason()).isEqualTo(FinishReason.LENGTH);
        }
        assertThat(loop.alive()).isFalse();
        assertThatThrownBy(() -> loop.submit(new GenerationRequest(new int[] {1, 2}, 3, SamplingParams.GREEDY, null),
                new RecordingSink())).isInstanceOf(Rejected.class).extracting(e -> ((Rejected) e).reason())
                .isEqualTo(Rejected.Reason.STOPPING);
    }

    @Test
    void shutdownAfterTheGraceAbortsWhatIsLeftAndReleasesItsBlocks() throws Exception {
        OffloadFixture f = fixture(new SplittableRandom(6));
        EngineLoop loop = loop(f, 100);
        CountDownLatch hold = new CountDownLatch(1);
        List<Integer> freeAtEnd = new ArrayList<>();
        loop.addStepListener((e, finished) -> {
            if (!e.hasWork()) {
                e.drainTransfers(); // stores in flight hold their source blocks until they end
                freeAtEnd.add(e.pool().freeCount());
            }
        });
        loop.call(e -> {
            try {
                hold.await(); // keeps the engine from stepping until the shutdown has begun
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
            }
            return null;
        });
        List<RecordingSink> sinks = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            RecordingSink s = new RecordingSink();
            loop.submit(new GenerationRequest(FingerprintEngines.nonStopping(1 + i, 9, 60), 60, SamplingParams.GREEDY, null), s);
            sinks.add(s);
        }
        Thread stopper = Thread.ofVirtual().start(() -> loop.shutdown(Duration.ZERO));
        while (loop.accepting()) {
            Thread.sleep(1);
        }
        hold.countDown();
        stopper.join();
        for (RecordingSink s : sinks) {
            assertThat(s.end.get(10, TimeUnit.SECONDS).reason()).isEqualTo(FinishReason.ABORT);
            assertThat(s.terminalCalls).isEqualTo(1);
        }
        assertThat(freeAtEnd).as("free blocks when the last request was aborted").isNotEmpty();
        assertThat(freeAtEnd.getLast()).isEqualTo(24);
    }

    @Test
    void aFailingStepFailsEveryRequestAndTheLoopReportsItsDeath() throws Exception {
        OffloadFixture f = fixture(new SplittableRandom(7));
        EngineLoop loop = new EngineLoop(f.engine, 100);
        loop.addStepListener((e, finished) -> {
            if (e.stats().steps() == 3) {
                throw new IllegalStateException("test: a bug in a step");
            }
        });
        loop.start();
        RecordingSink s = new RecordingSink();
        loop.submit(new GenerationRequest(FingerprintEngines.nonStopping(1, 9, 50), 50, SamplingParams.GREEDY, null), s);
        assertThatThrownBy(() -> s.end.get(10, TimeUnit.SECONDS)).hasMessageContaining("test: a bug in a step");
        while (loop.alive()) {
            Thread.sleep(5);
        }
        assertThat(loop.deathCause()).contains("test: a bug in a step");
        assertThatThrownBy(() -> loop.submit(new GenerationRequest(new int[] {1}, 1, SamplingParams.GREEDY, null), new RecordingSink()))
                .isInstanceOf(Rejected.class).extracting(e -> ((Rejected) e).reason()).isEqualTo(Rejected.Reason.ENGINE_DEAD);
    }
}

package io.kvtier.engine;

import static io.kvtier.engine.FingerprintEngines.config;
import static io.kvtier.engine.FingerprintEngines.engine;
import static io.kvtier.engine.FingerprintEngines.range;
import static io.kvtier.engine.FingerprintEngines.reference;
import static io.kvtier.engine.FingerprintEngines.runAll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.kv.ExtraKeys;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

class SchedulerTest {

    private static List<int[]> prompts(long seed, int count, int maxLen) {
        SplittableRandom rnd = new SplittableRandom(seed);
        int[] shared = range(1, 20);
        List<int[]> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            int len = 1 + rnd.nextInt(maxLen);
            int[] p = new int[len];
            boolean share = rnd.nextBoolean();
            for (int j = 0; j < len; j++) {
                p[j] = share && j < shared.length ? shared[j] : 1 + rnd.nextInt(FingerprintEngines.VOCAB - 1);
            }
            out.add(p);
        }
        return out;
    }

    private static void assertMatchesReference(List<Request> done, List<int[]> prompts, int maxTokens) {
        for (int i = 0; i < prompts.size(); i++) {
            assertThat(done.get(i).outputIds()).as("request %d", i).containsExactly(reference(prompts.get(i), maxTokens));
        }
    }

    @Test
    void batchOfRequestsEqualsEachRunAlone() {
        List<int[]> prompts = prompts(1, 12, 40);
        try (Engine e = engine(config(4, 256))) {
            List<Request> done = runAll(e, prompts, 30);
            assertMatchesReference(done, prompts, 30);
            assertThat(e.stats().preemptions()).isZero();
            e.pool().checkInvariants();
            assertThat(e.pool().freeCount()).isEqualTo(256);
            assertThat(e.kvCacheManager().activeRequests()).isZero();
        }
    }

    @Test
    void tinyPoolPreemptsAndRecomputesToTheSameTokens() {
        List<int[]> prompts = prompts(2, 10, 30);
        try (Engine e = engine(config(4, 20))) {
            List<Request> done = runAll(e, prompts, 40);
            assertMatchesReference(done, prompts, 40);
            assertThat(e.stats().preemptions()).isPositive();
            e.pool().checkInvariants();
            assertThat(e.pool().freeCount()).isEqualTo(20);
            assertThat(e.pool().emptyCount()).isEqualTo(20 - e.pool().cachedCount());
        }
    }

    @ParameterizedTest(name = "block {0}, budget {1}")
    @CsvSource({"1,1", "1,7", "4,1", "4,7", "4,64", "16,7", "16,64", "64,1", "64,64"})
    void chunkedPrefillGivesTheSameTokens(int blockSize, int budget) {
        List<int[]> prompts = prompts(3, 5, 70);
        try (Engine e = engine(config(blockSize, 4096 / blockSize).withMaxBatchTokens(budget))) {
            assertMatchesReference(runAll(e, prompts, 20), prompts, 20);
        }
    }

    @Test
    void prefixHitIsWholeBlocksAndNeverTheLastToken() {
        try (Engine e = engine(config(4, 64))) {
            e.submit(new Request(0, range(1, 8), 3, SamplingParams.GREEDY, ExtraKeys.NONE));
            e.runToCompletion();
            e.submit(new Request(1, range(1, 8), 3, SamplingParams.GREEDY, ExtraKeys.NONE));
            e.submit(new Request(2, range(1, 10), 3, SamplingParams.GREEDY, ExtraKeys.NONE));
            List<Request> done = e.runToCompletion();
            Request same = done.stream().filter(r -> r.id() == 1).findFirst().orElseThrow();
            Request longer = done.stream().filter(r -> r.id() == 2).findFirst().orElseThrow();
            assertThat(same.deviceHitTokens()).isEqualTo(4);
            assertThat(longer.deviceHitTokens()).isEqualTo(8);
            assertThat(same.outputIds()).containsExactly(reference(range(1, 8), 3));
            assertThat(longer.outputIds()).containsExactly(reference(range(1, 10), 3));
        }
    }

    @Test
    void abortReleasesBlocksAndReportsAbort() {
        try (Engine e = engine(config(4, 64))) {
            e.submit(new Request(0, range(1, 10), 50, SamplingParams.GREEDY, ExtraKeys.NONE));
            e.step();
            e.step();
            e.abort(0);
            List<Request> done = e.step();
            assertThat(done).singleElement().satisfies(r -> assertThat(r.finishReason()).isEqualTo(FinishReason.ABORT));
            assertThat(e.hasWork()).isFalse();
            assertThat(e.pool().freeCount()).isEqualTo(64);
            e.pool().checkInvariants();
        }
    }

    @Test
    void requestThatCanNeverFitIsRejectedUpFront() {
        try (Engine e = engine(config(4, 2))) {
            assertThatThrownBy(() -> e.submit(new Request(0, range(1, 6), 10, SamplingParams.GREEDY, ExtraKeys.NONE)))
                    .isInstanceOf(RequestDoesNotFitException.class)
                    .hasMessage("6 prompt tokens and up to 10 new ones need 15 token positions, 4 blocks of 4, but the device pool"
                            + " has 2: at most 3 new tokens fit");
        }
    }

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {11, 12, 13, 14, 15})
    void randomMixesWithAbortsEqualReference(long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        List<int[]> prompts = prompts(seed, 24, 50);
        try (Engine e = engine(config(4, 30).withMaxBatchTokens(1 + rnd.nextInt(40)))) {
            for (int i = 0; i < prompts.size(); i++) {
                e.submit(new Request(i, prompts.get(i), 25, SamplingParams.GREEDY, ExtraKeys.NONE));
            }
            List<Request> done = new ArrayList<>();
            while (e.hasWork()) {
                if (rnd.nextInt(20) == 0) {
                    e.abort(rnd.nextInt(prompts.size()));
                }
                done.addAll(e.step());
                e.pool().checkInvariants();
            }
            for (Request r : done) {
                int[] ref = reference(prompts.get((int) r.id()), 25);
                if (r.finishReason() == FinishReason.ABORT) {
                    assertThat(java.util.Arrays.copyOf(ref, r.numOutputTokens()))
                            .as("seed %d aborted request %d", seed, r.id()).containsExactly(r.outputIds());
                } else {
                    assertThat(r.outputIds()).as("seed %d request %d", seed, r.id()).containsExactly(ref);
                }
            }
            assertThat(done).hasSize(prompts.size());
            assertThat(e.pool().freeCount()).as("seed %d", seed).isEqualTo(30);
        }
    }
}

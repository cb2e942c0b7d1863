package io.kvtier.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.engine.ReferenceRecords.Record;
import io.kvtier.kv.ExtraKeys;
import io.kvtier.model.Checkpoint;
import io.kvtier.model.Kernels;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** ACCEPTANCE A01–A05: the engine on the real model reproduces the reference C implementation. */
class RealModelTest {

    private static final List<Record> RECORDS = ReferenceRecords.load();

    private static Engine engine(EngineConfig config) {
        return LlamaRunner.engine(Checkpoint.load(ReferenceRecords.model()), config, Kernels.best(), 2);
    }

    private static Request request(int i) {
        Record r = RECORDS.get(i);
        return new Request(i, r.promptIds(), r.maxTokens(), SamplingParams.GREEDY, ExtraKeys.NONE);
    }

    /** Submits the given records at once and checks every output against its reference. */
    private static List<Request> runAndCheck(Engine e, int... indices) {
        for (int i : indices) {
            e.submit(request(i));
        }
        List<Request> done = new ArrayList<>(e.runToCompletion());
        done.sort(Comparator.comparingLong(Request::id));
        for (Request r : done) {
            Record ref = RECORDS.get((int) r.id());
            assertThat(r.promptIds()).as("prompt ids of record %d", r.id()).containsExactly(ref.promptIds());
            assertThat(r.outputIds()).as("record %d (%s)", r.id(), e.config()).containsExactly(ref.expectedOutput());
            assertThat(r.finishReason()).isEqualTo(ref.generated()[ref.generated().length - 1] == 1
                    ? FinishReason.STOP : FinishReason.LENGTH);
        }
        e.pool().checkInvariants();
        assertThat(e.pool().freeCount()).as("no block leaked").isEqualTo(e.pool().numBlocks());
        assertThat(e.pool().emptyCount()).isEqualTo(e.pool().numBlocks() - e.pool().cachedCount());
        return done;
    }

    private static int[] all() {
        int[] a = new int[RECORDS.size()];
        for (int i = 0; i < a.length; i++) {
            a[i] = i;
        }
        return a;
    }

    @Test
    void a01_eachRecordAloneIsReproducedTokenForToken() {
        assertThat(RECORDS).hasSize(8);
        for (int i = 0; i < RECORDS.size(); i++) {
            try (Engine e = engine(EngineConfig.of(16, 64))) {
                runAndCheck(e, i);
            }
        }
    }

    @Test
    void a02_allRecordsAtOnceWithContinuousBatching() {
        try (Engine e = engine(EngineConfig.of(16, 512))) {
            runAndCheck(e, all());
            assertThat(e.stats().preemptions()).isZero();
            assertThat(e.stats().steps()).isLessThan(520);
        }
    }

    @ParameterizedTest(name = "block size {0}, {1} device blocks")
    @CsvSource({"64, 8", "16, 32", "32, 20"})
    void a03_tinyDevicePoolPreemptsAndRecomputes(int blockSize, int blocks) {
        try (Engine e = engine(EngineConfig.of(blockSize, blocks))) {
            runAndCheck(e, all());
            assertThat(e.stats().preemptions()).isPositive();
        }
    }

    @ParameterizedTest(name = "block size {0}, prefill chunk {1}")
    @CsvSource({"1,1", "1,7", "1,64", "4,1", "4,7", "4,64", "16,1", "16,7", "16,64", "64,1", "64,7", "64,64"})
    void a04_blockSizesAndPrefillChunksGiveIdenticalTokens(int blockSize, int chunk) {
        int blocks = 9 * ((512 + blockSize - 1) / blockSize);
        try (Engine e = engine(EngineConfig.of(blockSize, blocks).withMaxBatchTokens(chunk))) {
            runAndCheck(e, all());
        }
    }

    @Test
    void a05_sharedPrefixHitsTheDeviceCacheAndKeepsOutputs() {
        try (Engine e = engine(EngineConfig.of(16, 128))) {
            Request first = runAndCheck(e, 3).getFirst();
            Request second = runAndCheck(e, 4).getFirst();
            Request third = runAndCheck(e, 5).getFirst();
            assertThat(first.deviceHitTokens()).isZero();
            assertThat(second.deviceHitTokens()).isGreaterThanOrEqualTo(32).isEqualTo(32);
            assertThat(third.deviceHitTokens()).isGreaterThanOrEqualTo(32).isEqualTo(32);
        }
    }
}

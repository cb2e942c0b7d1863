package io.kvtier.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.engine.ReferenceRecords.Record;
import io.kvtier.kv.ExtraKeys;
import io.kvtier.model.Checkpoint;
import io.kvtier.model.Kernels;
import io.kvtier.offload.OffloadConfig;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Offloading on the real model: the 8 reference prompts one after another with the device prefix
 * cache dropped between them, so reuse must come from the host tier, through a device pool small
 * enough that its blocks are reused. Every output equals its reference record.
 */
class RealModelOffloadTest {

    private static final List<Record> RECORDS = ReferenceRecords.load();

    private static List<Request> runSequential(boolean saltPerPrompt, OffloadConfig oc) {
        return runSequential(saltPerPrompt, oc, "lru");
    }

    private static List<Request> runSequential(boolean saltPerPrompt, OffloadConfig oc, String eviction) {
        OffloadSetup setup = new OffloadSetup(16L << 20, 0, eviction, oc);
        List<Request> done = new ArrayList<>();
        try (Engine e = LlamaRunner.engine(Checkpoint.load(ReferenceRecords.model()), EngineConfig.of(16, 32),
                Kernels.best(), 2, setup)) {
            for (int i = 0; i < RECORDS.size(); i++) {
                Record rec = RECORDS.get(i);
                e.resetDevicePrefixCache();
                Request r = new Request(i, rec.promptIds(), rec.maxTokens(), SamplingParams.GREEDY,
                        ExtraKeys.salt(saltPerPrompt ? "tenant-" + i : null));
                e.submit(r);
                e.runToCompletion();
                e.drainTransfers();
                assertThat(r.outputIds()).as("record %d", i).containsExactly(rec.expectedOutput());
                done.add(r);
            }
            e.offload().checkInvariants();
            assertThat(e.offload().stats().loadFailures()).isZero();
            assertThat(e.pool().freeCount()).isEqualTo(32);
        }
        return done;
    }

    @Test
    void sequentialPromptsReuseTheSharedPrefixFromTheHostTier() {
        List<Request> done = runSequential(false, OffloadConfig.DEFAULT);
        assertThat(done.get(4).externalHitTokens().get("host")).isGreaterThanOrEqualTo(32);
        assertThat(done.get(5).externalHitTokens().get("host")).isGreaterThanOrEqualTo(32);
        assertThat(done.get(3).externalHitTokens()).isEmpty();
        for (Request r : done) {
            assertThat(r.deviceHitTokens()).isZero();
        }
    }

    @Test
    void arcEvictionGivesTheSameHitsAndOutputs() {
        List<Request> done = runSequential(false, OffloadConfig.DEFAULT, "arc");
        assertThat(done.get(4).externalHitTokens().get("host")).isEqualTo(32);
        assertThat(done.get(5).externalHitTokens().get("host")).isEqualTo(32);
    }

    @Test
    void decodeBlocksAndTwoBlockChunksKeepOutputs() {
        List<Request> done = runSequential(false, OffloadConfig.DEFAULT.withOffloadPromptOnly(false).withBlocksPerChunk(2));
        assertThat(done.get(4).externalHitTokens().get("host")).isEqualTo(32);
    }

    @Test
    void aCacheSaltPerPromptGivesNoExternalHitsAndTheSameOutputs() {
        for (Request r : runSequential(true, OffloadConfig.DEFAULT)) {
            assertThat(r.externalHitTokens()).isEmpty();
        }
    }
}

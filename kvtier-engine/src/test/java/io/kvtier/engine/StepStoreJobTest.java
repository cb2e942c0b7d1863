package io.kvtier.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.kv.BlockKey;
import io.kvtier.offload.OffloadConfig;
import io.kvtier.offload.transfer.ChunkCopy;
import io.kvtier.offload.transfer.StoreJob;
import io.kvtier.offload.transfer.TransferJob;
import io.kvtier.tier.TierIndex;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * One store job per engine step (issue 16): every request that completes a block in a step has it
 * stored by the step's one job, each block once, with the right bytes (the fixture compares every
 * ready host entry with the fingerprint model's KV after every step); a failed chunk in the middle
 * of such a job leaves nothing visible from there on, and every request whose chunks were cut
 * stores them again.
 */
class StepStoreJobTest {

    private static final int BLOCK_SIZE = 4;
    private static final int REQUESTS = 4;
    /** Prompt 3 + 14 generated tokens: KV is written for 16 positions (not the last token's), 4 blocks per request. */
    private static final int MAX_TOKENS = 14;

    private static OffloadFixture fixture() {
        return new OffloadFixture(FingerprintEngines.config(BLOCK_SIZE, 64).withStopTokens(), 64,
                OffloadConfig.DEFAULT.withOffloadPromptOnly(false), "lru");
    }

    private static List<Request> submitTogether(OffloadFixture f) {
        List<Request> rs = new ArrayList<>();
        for (int i = 0; i < REQUESTS; i++) {
            rs.add(f.submit(new int[] {1 + i, 7, 9}, MAX_TOKENS, "r" + i));
        }
        return rs;
    }

    /**
     * The engine thread's time deciding stores and applying completions (bench offload prints it
     * per stored block) is taken only where there is such work: a request that never fills a
     * block adds nothing to either, and decode steps that complete no block add nothing.
     */
    @Test
    void storeDecisionAndCompletionTimeIsCountedOnlyWhereThereIsSuchWork() {
        try (OffloadFixture f = fixture()) {
            f.submit(new int[] {1, 7}, 1, "short"); // KV of 2 positions: no full block of 4
            f.run();
            f.engine.drainTransfers();
            assertThat(f.offload.stats().blocksStored()).isEmpty();
            assertThat(f.offload.stats().storeDecisionNanos()).isZero();
            assertThat(f.offload.stats().completionNanos()).isZero();

            submitTogether(f);
            f.run();
            f.engine.drainTransfers();
            assertThat(f.offload.stats().blocksStored().get("host")).isEqualTo(16L);
            assertThat(f.offload.stats().storeDecisionNanos()).isPositive();
            assertThat(f.offload.stats().completionNanos()).isPositive();
        }
    }

    @Test
    void requestsCompletingBlocksInOneStepShareOneStoreJobAndEachBlockIsStoredOnce() {
        try (OffloadFixture f = fixture()) {
            List<Request> rs = submitTogether(f);
            List<Integer> storesPerStep = new ArrayList<>();
            while (f.engine.hasWork()) {
                int before = stores(f).size();
                f.step();
                storesPerStep.add(stores(f).size() - before);
            }
            f.engine.drainTransfers();
            f.checkInvariants();

            assertThat(storesPerStep).as("store jobs submitted per step").allMatch(n -> n <= 1);
            List<StoreJob> jobs = stores(f);
            assertThat(jobs).as("one job per step that completed blocks: at 4, 8, 12 and 16 positions").hasSize(4);
            List<BlockKey> stored = new ArrayList<>();
            for (StoreJob j : jobs) {
                assertThat(j.chunks()).as("one block of every request in job %d", j.jobId()).hasSize(REQUESTS);
                for (ChunkCopy c : j.chunks()) {
                    stored.add(c.key());
                }
            }
            Set<BlockKey> expected = new HashSet<>();
            for (Request r : rs) {
                assertThat(r.numComputed()).isEqualTo(16);
                expected.addAll(r.blockKeys().subList(0, 4));
                assertThat(f.offload.storedBlocks(r.id())).isZero(); // forgotten when it finished
            }
            assertThat(stored).as("every block of every request, each once").hasSize(16).containsExactlyInAnyOrderElementsOf(expected);
            for (BlockKey k : expected) {
                assertThat(f.host.index().state(k)).as("host entry %s", k.shortHex()).isEqualTo(TierIndex.EntryState.READY);
            }
            assertThat(f.offload.stats().blocksStored().get("host")).isEqualTo(16L);
            assertThat(f.offload.stats().storeFailures()).isZero();
            f.assertDrained();
        }
    }

    @Test
    void aChunkFailingInsideAStepsJobHidesItAndTheLaterPartsWhichAreStoredAgain() {
        try (OffloadFixture f = fixture()) {
            List<Request> rs = submitTogether(f);
            while (stores(f).isEmpty()) {
                f.step();
            }
            StoreJob first = stores(f).get(0);
            assertThat(first.chunks()).hasSize(REQUESTS);
            // The second chunk of the first job fails: it and the two after it (other requests') are not stored.
            BlockKey failing = first.chunks().get(1).key();
            f.transfers.failChunk(failing);
            f.engine.drainTransfers();
            f.checkInvariants();
            assertThat(f.host.index().state(first.chunks().get(0).key())).isEqualTo(TierIndex.EntryState.READY);
            for (int i = 1; i < REQUESTS; i++) {
                assertThat(f.host.index().state(first.chunks().get(i).key())).as("chunk %d of the failed job", i)
                        .isEqualTo(TierIndex.EntryState.ABSENT);
            }
            assertThat(f.offload.stats().storeFailures()).isEqualTo(1);
            f.transfers.clearFaults();

            f.run();
            f.engine.drainTransfers();
            f.checkInvariants();
            for (Request r : rs) {
                for (BlockKey k : r.blockKeys().subList(0, 4)) {
                    assertThat(f.host.index().state(k)).as("block %s of request %d, stored again after the cut", k.shortHex(), r.id())
                            .isEqualTo(TierIndex.EntryState.READY);
                }
            }
            assertThat(f.offload.stats().blocksStored().get("host")).as("each block counted once, when it really was stored")
                    .isEqualTo(16L);
            f.assertDrained();
        }
    }

    private static List<StoreJob> stores(OffloadFixture f) {
        List<StoreJob> out = new ArrayList<>();
        for (TransferJob j : f.transfers.submitted()) {
            if (j instanceof StoreJob s) {
                out.add(s);
            }
        }
        return out;
    }
}

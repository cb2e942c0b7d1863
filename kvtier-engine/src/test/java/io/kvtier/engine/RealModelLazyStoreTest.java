package io.kvtier.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.engine.ReferenceRecords.Record;
import io.kvtier.kv.BlockKey;
import io.kvtier.kv.ExtraKeys;
import io.kvtier.model.Checkpoint;
import io.kvtier.model.Kernels;
import io.kvtier.offload.OffloadConfig;
import io.kvtier.offload.OffloadStats;
import io.kvtier.offload.StorePolicy;
import io.kvtier.tier.TierIndex;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Lazy stores on the real model (stories260K, llama.cpp's reference records): the 8 prompts run
 * together through a 32-block device pool, so their freed blocks drift to the free queue's head
 * while others run; the test watches the queue before every step (where the engine's scan runs)
 * and computes which chunks reached the horizon. Exactly those chunks (with the chunks before
 * them in their chain, which a stored chunk needs) are stored, each once. Then every prompt runs
 * again alone with the device prefix cache dropped before it: outputs equal the references,
 * prefixes come from the host tier, and a drop loses no pending chunk (it stores them first).
 */
class RealModelLazyStoreTest {

    private static final List<Record> RECORDS = ReferenceRecords.load();
    private static final int HORIZON = 4;

    @Test
    void lazyStoresKeepOutputsAndStoreExactlyTheChunksThatReachedTheHorizon() {
        OffloadConfig oc = OffloadConfig.DEFAULT.withOffloadPromptOnly(false)
                .withStorePolicy(new StorePolicy(StorePolicy.Mode.LAZY, HORIZON));
        OffloadSetup setup = new OffloadSetup(16L << 20, 0, "lru", oc);
        try (Engine e = LlamaRunner.engine(Checkpoint.load(ReferenceRecords.model()), EngineConfig.of(16, 32),
                Kernels.best(), 2, setup)) {
            TierIndex host = e.offload().host().index();
            Set<BlockKey> evictedUnstored = new HashSet<>();
            e.pool().alsoOnEvictions(keys -> {
                for (BlockKey k : keys) {
                    if (host.state(k) == TierIndex.EntryState.ABSENT) {
                        evictedUnstored.add(k);
                    }
                }
            });
            List<Request> all = new ArrayList<>();
            for (int i = 0; i < RECORDS.size(); i++) {
                Record rec = RECORDS.get(i);
                Request r = new Request(i, rec.promptIds(), rec.maxTokens(), SamplingParams.GREEDY, ExtraKeys.NONE);
                e.submit(r);
                all.add(r);
            }
            Set<BlockKey> expected = new HashSet<>();
            while (e.hasWork()) {
                reachedHorizon(e, all, host, evictedUnstored, expected);
                e.advance();
            }
            e.drainTransfers();
            for (Request r : all) {
                assertThat(r.outputIds()).as("record %d, together", r.id()).containsExactly(RECORDS.get((int) r.id()).expectedOutput());
            }
            assertThat(expected).as("chunks that reached the horizon").isNotEmpty();
            for (BlockKey k : expected) {
                assertThat(host.state(k)).as("stored %s", k.shortHex()).isEqualTo(TierIndex.EntryState.READY);
            }
            assertThat(e.offload().stats().blocksStored().get("host")).as("blocks stored").isEqualTo((long) expected.size());

            long hostHits = 0;
            Long droppedBefore = e.offload().stats().blocksNotStored().get(OffloadStats.EVICTED_BEFORE_STORE);
            for (int i = 0; i < RECORDS.size(); i++) {
                Record rec = RECORDS.get(i);
                e.resetDevicePrefixCache();
                Request r = new Request(100 + i, rec.promptIds(), rec.maxTokens(), SamplingParams.GREEDY, ExtraKeys.NONE);
                e.submit(r);
                e.runToCompletion();
                e.drainTransfers();
                assertThat(r.outputIds()).as("record %d, alone", i).containsExactly(rec.expectedOutput());
                hostHits += r.externalHitTokens().getOrDefault("host", 0);
            }
            e.resetDevicePrefixCache();
            assertThat(hostHits).as("prompt tokens loaded from the host tier").isPositive();
            // Every reset stored the pending chunks before dropping the device cache: none evicted unstored.
            assertThat(e.offload().stats().blocksNotStored().get(OffloadStats.EVICTED_BEFORE_STORE)).isEqualTo(droppedBefore);
            assertThat(e.offload().pendingStoreChunks()).isZero();
            assertThat(e.offload().stats().loadFailures()).isZero();
            e.offload().checkInvariants();
        }
    }

    /**
     * The README's {@code --clear-device-cache-between}: prompts one after another, the device
     * prefix cache dropped before each. A drop evicts every block, so lazy stores write what eager
     * stores write and every later prompt's shared prefix comes from the host tier alike.
     */
    @Test
    void aDeviceCacheResetStoresThePendingChunksSoLazyHitsWhatEagerHits() {
        int[] order = {0, 1, 2, 3, 4, 5, 6, 7, 3, 5};
        List<Long> eager = hostHitsInSequence(StorePolicy.EAGER, order);
        List<Long> lazy = hostHitsInSequence(new StorePolicy(StorePolicy.Mode.LAZY, HORIZON), order);
        assertThat(lazy).isEqualTo(eager);
        assertThat(lazy.subList(8, 10)).as("records 3 and 5 again").allMatch(n -> n > 0);
    }

    /** Host hit tokens of each request, run in {@code order} with the device cache reset before each. */
    private static List<Long> hostHitsInSequence(StorePolicy stores, int... order) {
        OffloadConfig oc = OffloadConfig.DEFAULT.withStorePolicy(stores);
        try (Engine e = LlamaRunner.engine(Checkpoint.load(ReferenceRecords.model()), EngineConfig.of(16, 32),
                Kernels.best(), 2, new OffloadSetup(16L << 20, 0, "lru", oc))) {
            List<Long> hits = new ArrayList<>();
            for (Request r : SequentialRuns.run(e, order)) { // outputs checked against the references there
                hits.add((long) r.externalHitTokens().getOrDefault("host", 0));
            }
            assertThat(e.offload().stats().blocksNotStored()).as("%s", stores).doesNotContainKey(OffloadStats.EVICTED_BEFORE_STORE);
            return hits;
        }
    }

    /**
     * The blocks the engine's scan is about to see (the first HORIZON of the free queue): each
     * one not stored yet, whose chain lost no block unstored, adds itself and the unstored chunks
     * before it to {@code expected}.
     */
    private static void reachedHorizon(Engine e, List<Request> all, TierIndex host, Set<BlockKey> evictedUnstored,
                                       Set<BlockKey> expected) {
        for (int b : e.pool().nearEviction(HORIZON)) {
            BlockKey k = e.pool().keyOf(b);
            if (k == null || host.state(k) != TierIndex.EntryState.ABSENT) {
                continue;
            }
            List<BlockKey> chain = chainOf(all, k);
            if (chain.stream().noneMatch(evictedUnstored::contains)) {
                for (BlockKey c : chain) {
                    if (host.state(c) == TierIndex.EntryState.ABSENT) {
                        expected.add(c);
                    }
                }
            }
        }
    }

    /** The block keys of the prefix ending with {@code k}, head first. */
    private static List<BlockKey> chainOf(List<Request> all, BlockKey k) {
        for (Request r : all) {
            int i = r.blockKeys().indexOf(k);
            if (i >= 0) {
                return r.blockKeys().subList(0, i + 1);
            }
        }
        throw new AssertionError("no request holds block key " + k.shortHex());
    }
}

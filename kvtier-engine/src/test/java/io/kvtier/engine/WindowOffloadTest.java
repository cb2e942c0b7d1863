package io.kvtier.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.kv.BlockKey;
import io.kvtier.offload.OffloadConfig;
import io.kvtier.offload.OffloadScheduler;
import io.kvtier.offload.OffloadStats;
import io.kvtier.offload.transfer.LoadJob;
import io.kvtier.offload.transfer.StoreJob;
import io.kvtier.offload.transfer.TransferJob;
import io.kvtier.tier.TierIndex;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Offloading per KV group (issue 12, docs/kv-groups.md), in ACCEPTANCE's style, on two groups:
 * group 0 full attention, group 1 a sliding window of 6 positions, blocks of 4 tokens, one block
 * per chunk, prefill steps of 16 tokens. A 26-token prompt then stores blocks 0-6 in group 0 and
 * only blocks 2, 3, 5 and 6 in group 1 (0, 1 and 4 left the window in the step that filled them).
 */
class WindowOffloadTest {

    private static final int B = 4;
    private static final int W = 6;

    private static WindowOffloadFixture fixture(OffloadConfig oc) {
        return new WindowOffloadFixture(B, W, 64, 16, 64, oc);
    }

    /** A prompt of {@code len} tokens drawn from {@code seed} whose reference generates all {@code maxTokens} tokens. */
    private static int[] prompt(WindowOffloadFixture f, long seed, int len, int maxTokens) {
        SplittableRandom rnd = new SplittableRandom(seed);
        for (int i = 0; i < 200; i++) {
            int[] p = FingerprintEngines.randomTokens(rnd, len);
            if (f.reference(p, maxTokens).length == maxTokens) {
                return p;
            }
        }
        throw new IllegalStateException("no non-stopping prompt for seed " + seed);
    }

    private static Set<Integer> readyBlocks(WindowOffloadFixture f, int g, Request r, int blocks) {
        Set<Integer> ready = new HashSet<>();
        for (int i = 0; i < blocks; i++) {
            if (f.hosts.get(g).index().state(f.key(g, r, i)) == TierIndex.EntryState.READY) {
                ready.add(i);
            }
        }
        return ready;
    }

    private static OffloadStats windowStats(WindowOffloadFixture f) {
        return f.offload.windowParts().getFirst().stats();
    }

    @Test
    void aBlockThatLeftTheWindowIsNeverStoredAndAHitLoadsTheWindowBlocks() {
        try (WindowOffloadFixture f = fixture(OffloadConfig.DEFAULT)) {
            int[] p = prompt(f, 1, 26, 6);
            Request a = f.runOne(p, 6);
            assertThat(a.outputIds()).containsExactly(f.reference(p, 6));
            assertThat(readyBlocks(f, 0, a, 8)).containsExactlyInAnyOrder(0, 1, 2, 3, 4, 5, 6);
            assertThat(readyBlocks(f, 1, a, 8)).containsExactlyInAnyOrder(2, 3, 5, 6);
            assertThat(windowStats(f).windowBlocksSkipped()).isEqualTo(3);
            assertThat(f.windowStoresChecked).isEqualTo(3); // one store job per step that filled a block in the window
            // Bytes: group 0 (1 layer, 128 B a block) 7 blocks; group 1 (2 layers) 4 blocks, not 7.
            assertThat(f.offload.stats().bytesStored()).isEqualTo(7 * 128);
            assertThat(windowStats(f).bytesStored()).isEqualTo(4 * 256);

            f.engine.resetDevicePrefixCache();
            Request b = f.runOne(p, 6);
            assertThat(b.outputIds()).containsExactly(f.reference(p, 6));
            // Group 0 holds blocks 0-5 (the last prompt token is never a hit), but the window ending
            // at 24 (blocks 4, 5) or 20 (3, 4) misses block 4: the hit is 16 tokens, whose window is blocks 2, 3.
            assertThat(b.externalHitTokens()).containsEntry("host", 16);
            assertThat(f.offload.stats().blocksLoaded()).containsEntry("host", 4L);
            assertThat(windowStats(f).blocksLoaded()).containsEntry("host", 2L);
            assertThat(windowStats(f).bytesLoaded()).isEqualTo(2 * 256);
            f.assertDrained();
        }
    }

    @Test
    void aRequestFinishingWithItsLastBlockFullStoresItInBothGroups() {
        try (WindowOffloadFixture f = fixture(OffloadConfig.DEFAULT.withOffloadPromptOnly(false))) {
            int[] p = prompt(f, 2, 13, 4);
            Request a = f.runOne(p, 4); // 13 + 4 - 1 = 16 positions with KV: block 3 fills at the last step
            assertThat(a.numComputed()).isEqualTo(16);
            assertThat(readyBlocks(f, 0, a, 4)).containsExactlyInAnyOrder(0, 1, 2, 3);
            assertThat(readyBlocks(f, 1, a, 4)).containsExactlyInAnyOrder(2, 3);
            f.assertDrained();
        }
    }

    @Test
    void aStoreRacingTheReuseOfItsSourceBlockInEitherGroupCannotCorruptIt() {
        try (WindowOffloadFixture f = new WindowOffloadFixture(B, W, 20, 16, 64, OffloadConfig.DEFAULT)) {
            f.transfers(0).holdStores();
            f.transfers(1).holdStores();
            int[] p = prompt(f, 3, 26, 6);
            int[] q = prompt(f, 4, 30, 8);
            Request a = f.submit(p, 6);
            Request b = null;
            int steps = 0;
            while (f.engine.hasWork() || b == null) {
                f.step();
                if (b == null && a.isFinished()) {
                    b = f.submit(q, 8); // A's blocks are given back while their stores are held
                }
                for (int g = 0; g < 2; g++) {
                    // A block a held store reads is held, if at all, by a request whose block it is
                    // (same key): never handed out again for other KV while the copy may run.
                    Set<Integer> sources = heldStoreSources(f, g);
                    assertThat(sources).as("group %d has held stores", g).isNotEmpty();
                    for (Request r : f.engine.scheduler().running()) {
                        int[] table = f.engine.kvCacheManager().blockTable(r.id(), g);
                        for (int i = 0; i < table.length; i++) {
                            if (sources.contains(table[i])) {
                                assertThat(f.pools.get(g).keyOf(table[i])).as("group %d block %d of a held store in request %d", g,
                                        table[i], r.id()).isEqualTo(i < r.blockKeys().size() ? f.key(g, r, i) : null);
                            }
                        }
                    }
                }
                assertThat(++steps).isLessThan(500);
            }
            // The window group slid blocks 0-4 of A out while their stores were held; group 0 freed A's at its end.
            f.transfers(0).releaseAll();
            f.transfers(1).releaseAll();
            f.run(); // the per-step checks compare every ready entry's bytes with the reference's
            assertThat(readyBlocks(f, 0, a, 7)).hasSize(7);
            assertThat(readyBlocks(f, 1, a, 7)).containsExactlyInAnyOrder(2, 3, 5, 6);
            f.assertMatchReferences(List.of(a, b));
            f.assertDrained();
        }
    }

    private static Set<Integer> heldStoreSources(WindowOffloadFixture f, int g) {
        Set<Long> held = new HashSet<>(f.transfers(g).heldIds());
        Set<Integer> out = new HashSet<>();
        for (TransferJob j : f.transfers(g).submitted()) {
            if (j instanceof StoreJob s && held.contains(s.jobId())) {
                s.chunks().forEach(c -> {
                    for (int b : c.deviceBlocks()) out.add(b);
                });
            }
        }
        return out;
    }

    @ParameterizedTest(name = "load failing in group {0}")
    @ValueSource(ints = {0, 1})
    void aLoadFailingInOneGroupRollsBothBack(int failing) {
        try (WindowOffloadFixture f = fixture(OffloadConfig.DEFAULT)) {
            int[] p = prompt(f, 5, 26, 6);
            f.runOne(p, 6);
            f.engine.resetDevicePrefixCache();
            f.transfers(failing).failJobs(j -> j instanceof LoadJob);
            Request b = f.runOne(p, 6);
            assertThat(b.outputIds()).containsExactly(f.reference(p, 6));
            assertThat(b.externalHitTokens().values().stream().mapToInt(Integer::intValue).sum())
                    .as("nothing counts as loaded: the window group loaded only the window ending at the hit").isZero();
            OffloadStats failed = failing == 0 ? f.offload.stats() : windowStats(f);
            assertThat(failed.loadFailures()).isEqualTo(1);
            assertThat(f.offload.stats().externalHitTokensTotal()).isZero();
            // Every block from the device hit on was recomputed: a third run hits the device
            // prefix cache, whose blocks the checks compare with the reference, and matches.
            f.transfers(failing).clearFaults();
            Request c = f.runOne(p, 6);
            assertThat(c.outputIds()).containsExactly(f.reference(p, 6));
            assertThat(c.deviceHitTokens()).isEqualTo(24); // blocks 0-5 of group 0, the window ending at 24 (blocks 4, 5) of group 1
            f.assertDrained();
        }
    }

    @Test
    void aHitOneGroupCannotServeIsNotReported() {
        try (WindowOffloadFixture f = fixture(OffloadConfig.DEFAULT)) {
            int[] p = prompt(f, 6, 26, 6);
            Request a = f.runOne(p, 6);
            // Group 1 loses the window of the one boundary it served (blocks 2, 3); group 0 keeps every block.
            f.hosts.get(1).index().remove(f.key(1, a, 3));
            assertThat(readyBlocks(f, 0, a, 7)).hasSize(7);
            f.engine.resetDevicePrefixCache();
            Request b = f.runOne(p, 6);
            assertThat(b.outputIds()).containsExactly(f.reference(p, 6));
            assertThat(b.externalHitTokens()).isEmpty();
            assertThat(f.offload.stats().externalHitTokensTotal()).isZero();
            assertThat(f.offload.stats().blocksLoaded()).isEmpty();
            assertThat(windowStats(f).blocksLoaded()).isEmpty();
            f.assertDrained();
        }
    }
    /**
     * Prefill priority picks a victim without offload jobs in flight in any group: R1 (earlier)
     * has none, R2 (later) only a store in the window group, held. R3's prompt does not fit, so a
     * running request is preempted: R1, although R2 arrived later and has nothing in flight in group 0.
     */
    @Test
    void aPrefillVictimIsOneWithoutJobsInEveryGroup() {
        EngineConfig ec = FingerprintEngines.config(B, 12).withMaxBatchTokens(16).withPrefillPriority(true);
        try (WindowOffloadFixture f = new WindowOffloadFixture(B, W, ec, 64, OffloadConfig.DEFAULT, "lru")) {
            OffloadScheduler window = f.offload.windowParts().getFirst();
            int[] p1 = prompt(f, 7, 16, 12); // ends on a block boundary: every prompt block is stored by its prefill
            int[] p2 = prompt(f, 8, 14, 12);
            int[] p3 = prompt(f, 9, 20, 4);
            Request r1 = f.submit(p1, 12);
            for (int i = 0; i < 3; i++) {
                f.step();
            }
            assertThat(r1.numOutputTokens()).isEqualTo(3);
            assertThat(f.offload.jobsInFlight() + window.jobsInFlight()).as("R1's stores ended").isZero();
            f.transfers(1).holdStores();
            Request r2 = f.submit(p2, 12);
            f.step(); // R2's prefill: its window store is held, its group 0 store runs
            f.step();
            assertThat(r2.numOutputTokens()).isEqualTo(2);
            assertThat(f.offload.jobsInFlight()).as("group 0: nothing in flight").isZero();
            assertThat(window.hasJobs(r2.id())).as("R2's store in the window group").isTrue();
            assertThat(window.hasJobs(r1.id())).isFalse();
            Request r3 = f.submit(p3, 4);
            f.step();
            assertThat(r1.prefillPreemptions()).as("R1: no jobs in any group").isEqualTo(1);
            assertThat(r2.prefillPreemptions()).as("R2: a store in flight in group 1").isZero();
            assertThat(f.engine.scheduler().running()).contains(r2, r3).doesNotContain(r1);
            f.transfers(1).releaseAll();
            f.run();
            f.assertMatchReferences(List.of(r1, r2, r3));
            f.assertDrained();
        }
    }
}

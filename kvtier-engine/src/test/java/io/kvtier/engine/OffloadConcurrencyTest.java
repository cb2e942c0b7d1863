package io.kvtier.engine;

import static io.kvtier.engine.FingerprintEngines.range;
import static io.kvtier.engine.FingerprintEngines.reference;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.offload.OffloadConfig;
import io.kvtier.tier.TierIndex;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** ACCEPTANCE O09–O16: blocks, loads and stores in flight at the same time (B = 4). */
class OffloadConcurrencyTest {

    private static final OffloadConfig DEFAULT = OffloadConfig.DEFAULT;

    private static void steps(OffloadFixture f, int n) {
        for (int i = 0; i < n; i++) {
            f.step();
        }
    }

    @Test
    void o09_aBlockIsNotReusedWhileItsStoreIsPending() {
        try (OffloadFixture f = new OffloadFixture(4, 2, 8, DEFAULT)) {
            f.transfers.holdStores();
            Request a = f.submit(range(1, 4), 2);
            steps(f, 2);
            assertThat(a.isFinished()).isTrue();
            int aBlock = f.pool.lookup(a.blockKeys().get(0));
            assertThat(f.pool.refCount(aBlock)).as("held by the pending store").isEqualTo(1);
            Request b = f.submit(new int[] {9, 10, 11, 12, 13}, 1);
            steps(f, 3);
            assertThat(b.status()).isEqualTo(Request.Status.WAITING);
            f.releaseEverything();
            f.run();
            assertThat(b.outputIds()).containsExactly(reference(new int[] {9, 10, 11, 12, 13}, 1));
            assertThat(f.host.index().state(a.blockKeys().get(0))).isEqualTo(TierIndex.EntryState.READY);
            f.assertDrained();
        }
    }

    @Test
    void o10_aLoadDoesNotTakeABlockWhoseStoreIsPending() {
        try (OffloadFixture f = new OffloadFixture(4, 2, 8, DEFAULT)) {
            int[] x = {20, 21, 22, 23, 24};
            f.runOne(x, 1); // host holds the block [20..23]
            f.engine.resetDevicePrefixCache();
            f.transfers.holdStores();
            Request a = f.submit(range(1, 4), 2);
            steps(f, 2);
            assertThat(a.isFinished()).isTrue();
            int aBlock = f.pool.lookup(a.blockKeys().get(0));
            Request b = f.submit(x, 2);
            steps(f, 3);
            // B loads its hit into the free block, then needs a second one: only A's, still being stored.
            assertThat(b.externalHitTokens()).isEqualTo(Map.of("host", 4));
            assertThat(f.engine.kvCacheManager().blockTable(b.id())).doesNotContain(aBlock);
            assertThat(b.numOutputTokens()).isZero();
            f.releaseEverything();
            f.run();
            assertThat(b.externalHitTokens()).isEqualTo(Map.of("host", 4));
            assertThat(b.outputIds()).containsExactly(reference(x, 2));
            f.assertDrained();
        }
    }

    @Test
    void o11_preemptionWithStoresPending() {
        try (OffloadFixture f = new OffloadFixture(4, 6, 16, DEFAULT)) {
            f.transfers.holdStores();
            int[] pb = FingerprintEngines.nonStopping(31, 8, 14);
            int[] pa = FingerprintEngines.nonStopping(1, 8, 10);
            Request b = f.submit(pb, 14);
            Request a = f.submit(pa, 10);
            for (int i = 0; i < 12 && a.preemptions() == 0; i++) {
                f.step();
            }
            assertThat(a.preemptions()).as("the newest running request is preempted").isEqualTo(1);
            assertThat(f.offload.hasJobs(a.id())).isTrue();
            steps(f, 5);
            assertThat(a.status()).as("not re-admitted while its stores are pending").isEqualTo(Request.Status.WAITING);
            f.engine.scheduler().preempt(a); // a second preemption handling is a no-op
            assertThat(f.engine.scheduler().waiting().stream().filter(r -> r == a).count()).isEqualTo(1);
            f.releaseEverything();
            f.run();
            assertThat(a.outputIds()).containsExactly(reference(pa, 10));
            assertThat(b.outputIds()).containsExactly(reference(pb, 14));
            f.assertDrained();
        }
    }

    @Test
    void o12_concurrentLookupsOfOnePrefixLoadEachKeyOnce() {
        try (OffloadFixture f = new OffloadFixture(4, 64, 16, DEFAULT)) {
            int[] p = range(1, 16);
            f.runOne(java.util.Arrays.copyOf(p, 17), 1); // stores h1..h4
            f.engine.resetDevicePrefixCache();
            long loaded = f.offload.stats().blocksLoaded().getOrDefault("host", 0L);
            int[] p1 = java.util.Arrays.copyOf(p, 17);
            p1[16] = 20;
            int[] p2 = java.util.Arrays.copyOf(p, 17);
            p2[16] = 21;
            Request r1 = f.submit(p1, 2);
            Request r2 = f.submit(p2, 2);
            f.step();
            assertThat(r1.status()).isEqualTo(Request.Status.LOADING);
            assertThat(r2.status()).as("waits for r1's load of the same keys").isEqualTo(Request.Status.WAITING);
            while (r2.status() != Request.Status.RUNNING) {
                f.step();
            }
            // R2 shares R1's loaded blocks through the device prefix cache: one device block per key.
            assertThat(java.util.Arrays.copyOf(f.engine.kvCacheManager().blockTable(r2.id()), 4))
                    .containsExactly(java.util.Arrays.copyOf(f.engine.kvCacheManager().blockTable(r1.id()), 4));
            f.run();
            assertThat(f.offload.stats().blocksLoaded().get("host") - loaded).isEqualTo(4);
            assertThat(r1.externalHitTokens()).isEqualTo(Map.of("host", 16));
            assertThat(r2.externalHitTokens()).isEmpty();
            assertThat(r2.deviceHitTokens()).isEqualTo(16);
            assertThat(r1.outputIds()).containsExactly(reference(p1, 2));
            assertThat(r2.outputIds()).containsExactly(reference(p2, 2));
        }
    }

    @Test
    void o12_aRequestHittingTheDeviceIsNotDelayedByAnUnrelatedLoad() {
        try (OffloadFixture f = new OffloadFixture(4, 64, 16, DEFAULT)) {
            f.runOne(range(1, 17), 1);
            f.engine.resetDevicePrefixCache();
            f.runOne(range(40, 48), 1); // device holds [40..47]
            f.transfers.holdLoads();
            Request r1 = f.submit(range(1, 17), 2);
            Request r3 = f.submit(range(40, 49), 2);
            for (int i = 0; i < 6 && !r3.isFinished(); i++) {
                f.step();
            }
            assertThat(r1.status()).isEqualTo(Request.Status.LOADING);
            assertThat(r3.isFinished()).isTrue();
            assertThat(r3.deviceHitTokens()).isEqualTo(8);
            f.releaseEverything();
            f.run();
            assertThat(r1.outputIds()).containsExactly(reference(range(1, 17), 2));
            assertThat(r3.outputIds()).containsExactly(reference(range(40, 49), 2));
        }
    }

    @Test
    void o13_abortWhileLoading() {
        try (OffloadFixture f = new OffloadFixture(4, 3, 8, DEFAULT)) {
            f.runOne(range(1, 9), 1);
            f.engine.resetDevicePrefixCache();
            f.transfers.holdLoads();
            Request a = f.submit(range(1, 9), 2);
            f.step();
            assertThat(a.status()).isEqualTo(Request.Status.LOADING);
            int[] targets = f.engine.kvCacheManager().blockTable(a.id());
            f.engine.abort(a.id());
            f.step();
            assertThat(a.finishReason()).isEqualTo(FinishReason.ABORT);
            for (int t : targets) {
                assertThat(f.pool.refCount(t)).as("target block %d held by the load", t).isEqualTo(1);
            }
            Request b = f.submit(new int[] {50, 51, 52, 53, 54, 55, 56, 57, 58}, 1);
            f.step();
            assertThat(b.status()).as("the load targets are not reused yet").isEqualTo(Request.Status.WAITING);
            f.releaseEverything();
            f.run();
            assertThat(b.outputIds()).containsExactly(reference(new int[] {50, 51, 52, 53, 54, 55, 56, 57, 58}, 1));
            assertThat(f.offload.hasJobs(a.id())).isFalse();
            assertThat(f.offload.storedBlocks(a.id())).isZero();
            f.assertDrained();
        }
    }

    @Test
    void o14_aFullTierIsNotAnError() {
        try (OffloadFixture f = new OffloadFixture(4, 64, 3, DEFAULT)) {
            f.runOne(range(60, 68), 1); // host: X1, X2 (1 slot free)
            f.engine.resetDevicePrefixCache();
            f.transfers.holdLoads();
            f.transfers.holdStores(); // a stored chunk stays STORING: nobody evicts it meanwhile
            Request pin = f.submit(range(60, 68), 1); // pins X1, X2 by a held load
            int[] pa = FingerprintEngines.nonStopping(1, 8, 10);
            // 1 free slot, nothing evictable: A (2 chunks) may store its first chunk (issue 15), B (1
            // chunk) its only one; whoever commits second is refused and retries while it decodes.
            Request a = f.submit(pa, 10);
            int[] pb = FingerprintEngines.nonStopping(11, 5, 8);
            Request b = f.submit(pb, 8);
            f.step();
            f.step();
            assertThat(f.offload.stats().storeRefusals()).isGreaterThanOrEqualTo(1);
            // The free slot went to A's first chunk (A commits first); B waits.
            assertThat(f.host.index().state(a.blockKeys().get(0))).isEqualTo(TierIndex.EntryState.STORING);
            assertThat(f.host.index().state(b.blockKeys().get(0))).isEqualTo(TierIndex.EntryState.ABSENT);
            assertThat(f.host.index().state(a.blockKeys().get(1))).isEqualTo(TierIndex.EntryState.ABSENT);
            long refusals = f.offload.stats().storeRefusals();
            f.step();
            assertThat(f.offload.stats().storeRefusals()).as("A and B retry at their next step; A is %s", a).isGreaterThan(refusals);
            f.releaseEverything();
            f.run();
            // Both refused stores were retried until space freed (A's first chunk, stored first, may
            // since have been evicted for them: the policy chooses among the other requests' entries).
            assertThat(f.host.index().state(a.blockKeys().get(1))).isEqualTo(TierIndex.EntryState.READY);
            assertThat(f.host.index().state(b.blockKeys().get(0))).isEqualTo(TierIndex.EntryState.READY);
            assertThat(pin.outputIds()).containsExactly(reference(range(60, 68), 1));
            assertThat(a.outputIds()).containsExactly(reference(pa, 10));
            assertThat(b.outputIds()).containsExactly(reference(pb, 8));
            // A store larger than the whole tier stores the prefix that fits, evicting others (issue 15;
            // ACCEPTANCE O14 had it refused), and counts the rest once.
            Request big = f.runOne(range(70, 86), 1); // 4 full blocks, 3 slots
            for (int i = 0; i < 3; i++) {
                assertThat(f.host.index().state(big.blockKeys().get(i))).isEqualTo(TierIndex.EntryState.READY);
            }
            assertThat(f.host.index().state(big.blockKeys().get(3))).isEqualTo(TierIndex.EntryState.ABSENT);
            assertThat(f.offload.stats().blocksNotStored()).containsEntry(io.kvtier.offload.OffloadStats.LONGER_THAN_HOST, 1L);
            f.assertDrained();
        }
    }

    @Test
    void o15_storeCursorAdvancesOnlyOnCommitAndLeavesNoHole() {
        try (OffloadFixture f = new OffloadFixture(4, 64, 4, DEFAULT)) {
            f.runOne(range(60, 76), 1); // host full: X1..X4
            f.engine.resetDevicePrefixCache();
            f.transfers.holdLoads();
            f.submit(range(60, 72), 1); // pins X1..X3
            Request a = f.submit(range(1, 16), 8);
            f.step();
            f.step();
            // One slot can be made (X4 is evictable): the first chunk is stored, the cursor stays after it.
            assertThat(f.offload.storedBlocks(a.id())).as("the cursor covers only what was accepted").isEqualTo(1);
            assertThat(f.host.index().state(a.blockKeys().get(1))).isEqualTo(TierIndex.EntryState.ABSENT);
            f.releaseEverything();
            f.run();
            for (int i = 0; i < 4; i++) {
                assertThat(f.host.index().state(a.blockKeys().get(i))).as("h%d", i + 1).isEqualTo(TierIndex.EntryState.READY);
            }
            assertThat(a.outputIds()).containsExactly(reference(range(1, 16), 8));
        }
    }

    @Test
    void o16_aLookupRetriedByTheSchedulerCountsTheHitOnce() {
        try (OffloadFixture f = new OffloadFixture(4, 4, 8, DEFAULT)) {
            f.runOne(range(1, 9), 1);
            f.engine.resetDevicePrefixCache();
            Request c = f.submit(range(50, 57), 3); // holds 3 of the 4 blocks for a few steps
            f.step();
            Request r = f.submit(range(1, 9), 3);
            f.step();
            f.step();
            assertThat(r.status()).as("allocation failed for two steps").isEqualTo(Request.Status.WAITING);
            while (r.status() != Request.Status.LOADING) {
                f.step();
            }
            assertThat(f.offload.storedBlocks(r.id()) * 4).as("stored cursor in tokens").isEqualTo(8);
            f.run();
            assertThat(r.externalHitTokens()).isEqualTo(Map.of("host", 8));
            assertThat(f.offload.stats().externalHitTokens()).isEqualTo(Map.of("host", 8L));
            assertThat(r.outputIds()).containsExactly(reference(range(1, 9), 3));
            assertThat(c.outputIds()).containsExactly(reference(range(50, 57), 3));
        }
    }
}

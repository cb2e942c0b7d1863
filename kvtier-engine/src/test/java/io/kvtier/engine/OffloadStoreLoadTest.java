package io.kvtier.engine;

import static io.kvtier.engine.FingerprintEngines.range;
import static io.kvtier.engine.FingerprintEngines.reference;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.kv.BlockKey;
import io.kvtier.offload.OffloadConfig;
import io.kvtier.tier.TierIndex;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** ACCEPTANCE O01–O08: what is stored, when, and what a later request loads (B = 4). */
class OffloadStoreLoadTest {

    private static int[] concat(int[] a, int... b) {
        int[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    private static TierIndex.EntryState state(OffloadFixture f, BlockKey k) {
        return f.host.index().state(k);
    }

    @Test
    void o01_storeThenHitLoadsTheBlocksOnceAndComputesOneToken() {
        try (OffloadFixture f = new OffloadFixture(4, 64, 16, OffloadConfig.DEFAULT)) {
            Request a = f.runOne(range(1, 8), 1);
            assertThat(f.offload.stats().blocksStored()).isEqualTo(Map.of("host", 2L));
            assertThat(state(f, a.blockKeys().get(0))).isEqualTo(TierIndex.EntryState.READY);
            assertThat(state(f, a.blockKeys().get(1))).isEqualTo(TierIndex.EntryState.READY);
            f.engine.resetDevicePrefixCache();
            long before = f.computedTokens();
            Request b = f.runOne(range(1, 9), 3);
            assertThat(b.externalHitTokens()).isEqualTo(Map.of("host", 8));
            assertThat(b.deviceHitTokens()).isZero();
            assertThat(f.offload.stats().blocksLoaded()).isEqualTo(Map.of("host", 2L));
            // One prompt token computed (position 8), then the decode steps.
            assertThat(f.computedTokens() - before).isEqualTo(1 + b.numOutputTokens() - (b.finishReason() == FinishReason.STOP ? 0 : 1));
            assertThat(b.outputIds()).containsExactly(reference(range(1, 9), 3));
            f.assertDrained();
        }
    }

    @Test
    void o02_onlyFullBlocksAreStored() {
        try (OffloadFixture f = new OffloadFixture(4, 64, 16, OffloadConfig.DEFAULT)) {
            Request a = f.runOne(range(1, 6), 1);
            assertThat(f.offload.stats().blocksStored()).isEqualTo(Map.of("host", 1L));
            assertThat(a.blockKeys()).hasSizeGreaterThanOrEqualTo(1);
            f.engine.resetDevicePrefixCache();
            Request b = f.runOne(range(1, 7), 2);
            assertThat(b.externalHitTokens()).isEqualTo(Map.of("host", 4));
            assertThat(b.outputIds()).containsExactly(reference(range(1, 7), 2));
        }
    }

    @Test
    void o03_neverTheLastPromptToken() {
        try (OffloadFixture f = new OffloadFixture(4, 64, 16, OffloadConfig.DEFAULT)) {
            f.runOne(range(1, 8), 1);
            f.engine.resetDevicePrefixCache();
            long before = f.computedTokens();
            Request same = f.runOne(range(1, 8), 2);
            // h2 would cover position 7, the last prompt token: only h1 is loaded, 5..8 computed.
            assertThat(same.externalHitTokens()).isEqualTo(Map.of("host", 4));
            long computedPrompt = f.computedTokens() - before - (same.numOutputTokens() - (same.finishReason() == FinishReason.STOP ? 0 : 1));
            assertThat(computedPrompt).isEqualTo(8 - 4);
            assertThat(same.outputIds()).containsExactly(reference(range(1, 8), 2));
            f.engine.resetDevicePrefixCache();
            Request longer = f.runOne(range(1, 9), 2);
            assertThat(longer.externalHitTokens()).isEqualTo(Map.of("host", 8));
            assertThat(longer.outputIds()).containsExactly(reference(range(1, 9), 2));
        }
    }

    @Test
    void o04_hitBeyondTheDeviceHitOnlyAndTheDeviceBlockIsUntouched() {
        try (OffloadFixture f = new OffloadFixture(4, 64, 16, OffloadConfig.DEFAULT)) {
            Request a = f.runOne(range(1, 13), 1); // stores h1..h3
            f.engine.resetDevicePrefixCache();
            f.runOne(range(1, 5), 1); // device holds h1 again (computed), nothing else
            int h1Block = f.pool.lookup(a.blockKeys().get(0));
            assertThat(h1Block).isNotNegative();
            byte[] before = f.pool.block(h1Block).toArray(ValueLayout.JAVA_BYTE);
            long loadedBefore = f.offload.stats().blocksLoaded().getOrDefault("host", 0L);
            Request b = f.runOne(range(1, 13), 2);
            assertThat(b.deviceHitTokens()).isEqualTo(4);
            assertThat(b.externalHitTokens()).isEqualTo(Map.of("host", 8));
            assertThat(f.offload.stats().blocksLoaded().get("host") - loadedBefore).isEqualTo(2);
            assertThat(f.pool.lookup(a.blockKeys().get(0))).isEqualTo(h1Block);
            assertThat(f.pool.block(h1Block).toArray(ValueLayout.JAVA_BYTE)).isEqualTo(before);
            assertThat(b.outputIds()).containsExactly(reference(range(1, 13), 2));
        }
    }

    @Test
    void o05_chunksOfTwoBlocksAndADeviceHitEndingInsideAChunk() {
        try (OffloadFixture f = new OffloadFixture(4, 64, 16, OffloadFixture.chunks(2))) {
            Request a = f.runOne(range(1, 14), 1); // blocks h1..h3 full; only chunk [1..8] is whole
            assertThat(f.offload.stats().blocksStored()).isEqualTo(Map.of("host", 2L));
            assertThat(state(f, a.blockKeys().get(1))).isEqualTo(TierIndex.EntryState.READY);
            assertThat(state(f, a.blockKeys().get(2))).isEqualTo(TierIndex.EntryState.ABSENT);
            f.engine.resetDevicePrefixCache();
            f.runOne(range(1, 5), 1); // device: h1 only
            long loaded = f.offload.stats().blocksLoaded().getOrDefault("host", 0L);
            Request b = f.runOne(range(1, 9), 2);
            assertThat(b.deviceHitTokens()).isEqualTo(4);
            assertThat(b.externalHitTokens()).isEqualTo(Map.of("host", 4));
            assertThat(f.offload.stats().blocksLoaded().get("host") - loaded).isEqualTo(1);
            assertThat(b.outputIds()).containsExactly(reference(range(1, 9), 2));
            f.assertDrained();
        }
    }

    @Test
    void o06_decodeBlocksAreStoredOnlyWhenAskedFor() {
        try (OffloadFixture f = new OffloadFixture(4, 64, 16, OffloadConfig.DEFAULT)) {
            Request a = f.runOne(range(1, 4), 12);
            assertThat(a.numOutputTokens()).as("needs a long enough output for this test").isGreaterThanOrEqualTo(9);
            // Prompt blocks only: block 0 holds prompt tokens; blocks 1, 2 hold only generated ones.
            assertThat(f.offload.stats().blocksStored()).isEqualTo(Map.of("host", 1L));
        }
        try (OffloadFixture f = new OffloadFixture(4, 64, 16, OffloadConfig.DEFAULT.withOffloadPromptOnly(false))) {
            Request a = f.runOne(range(1, 4), 12);
            int kvWritten = a.numTokens() - 1;
            assertThat(f.offload.stats().blocksStored()).isEqualTo(Map.of("host", (long) (kvWritten / 4)));
            assertThat(kvWritten / 4).isGreaterThanOrEqualTo(2);
        }
    }

    @Test
    void o07_lastBlockOfAFinishingRequestIsStoredWhenFull() {
        try (OffloadFixture f = new OffloadFixture(4, 64, 16, OffloadConfig.DEFAULT)) {
            int[] prompt = {5, 6, 7};
            Request a = f.runOne(prompt, 2);
            assertThat(a.numOutputTokens()).as("fingerprint outputs for [5,6,7] do not stop early").isEqualTo(2);
            int d = a.outputIds()[0];
            // Step 2 computed position 3 (d), completing block 0, and the request finished in that step.
            assertThat(f.offload.stats().blocksStored()).isEqualTo(Map.of("host", 1L));
            assertThat(state(f, a.blockKeys().get(0))).isEqualTo(TierIndex.EntryState.READY);
            f.engine.resetDevicePrefixCache();
            Request b = f.runOne(new int[] {5, 6, 7, d, 11}, 2);
            assertThat(b.externalHitTokens()).isEqualTo(Map.of("host", 4));
            assertThat(b.outputIds()).containsExactly(reference(new int[] {5, 6, 7, d, 11}, 2));
        }
    }

    @Test
    void o08_neverABlockWhoseLastKvWasNotWritten() {
        // Find prompts whose first generated token is the stop token (0) on the fingerprint model.
        int[] three = null;
        int[] two = null;
        for (int t = 1; t < 5000 && (three == null || two == null); t++) {
            int[] p3 = {1 + t % 96, 1 + (t / 96) % 96, 3};
            if (three == null && reference(p3, 1).length == 0) {
                three = p3;
            }
            int[] p2 = {1 + t % 96, 1 + (t / 96) % 96};
            if (two == null && reference(p2, 1).length == 0) {
                two = p2;
            }
        }
        assertThat(three).isNotNull();
        assertThat(two).isNotNull();
        try (OffloadFixture f = new OffloadFixture(4, 64, 16, OffloadConfig.DEFAULT.withOffloadPromptOnly(false))) {
            Request a = f.runOne(three, 5);
            assertThat(a.finishReason()).isEqualTo(FinishReason.STOP);
            assertThat(a.blockKeys()).isEmpty();
            Request b = f.runOne(two, 5);
            assertThat(b.finishReason()).isEqualTo(FinishReason.STOP);
            assertThat(f.offload.stats().blocksStored()).isEmpty();
            assertThat(f.host.index().readyCount()).isZero();
            assertThat(f.events.drain()).isEmpty();
        }
    }

    @Test
    void storedKeysAreAnnouncedOnceWithTheirParent() {
        try (OffloadFixture f = new OffloadFixture(4, 64, 16, OffloadConfig.DEFAULT)) {
            Request a = f.runOne(range(1, 9), 1);
            List<?> events = f.events.drain();
            assertThat(events).hasSize(1);
            assertThat(events.getFirst().toString()).contains("host");
            assertThat(a.blockKeys()).hasSize(2);
        }
    }
}

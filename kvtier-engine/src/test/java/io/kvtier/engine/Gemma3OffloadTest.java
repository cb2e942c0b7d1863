package io.kvtier.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.kv.ExtraKeys;
import io.kvtier.model.Kernels;
import io.kvtier.model.Models;
import io.kvtier.model.DigestCache;
import io.kvtier.model.gguf.LlamaCppReference;
import io.kvtier.offload.DiskWritePolicy;
import io.kvtier.offload.OffloadConfig;
import io.kvtier.offload.OffloadScheduler;
import io.kvtier.offload.OffloadStats;
import io.kvtier.tier.disk.DiskFsync;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The gemma3 fixture (window 16, five local layers to one global) offloading per KV group with the
 * host and disk tiers on (issue 12): a tiny device pool that preempts, the device cache cleared
 * between prompts, a restart that hits the disk tier; every run gives llama.cpp's greedy tokens
 * (its reference, {@link Gemma3EngineTest#REFS}). Prints the bytes stored and loaded per request
 * with the per-group rules against storing every block of every layer (the README's numbers).
 */
class Gemma3OffloadTest {

    @TempDir
    Path tmp;

    /** Bytes of one block of all six layers: 6 x 2 (K, V) x 16 positions x 1 KV head x 32 floats x 4 B. */
    private static final long ALL_LAYERS_BLOCK = 24_576;

    private Engine engine(EngineConfig config, Path diskDir) {
        OffloadSetup setup = new OffloadSetup(16L << 20, 0, "lru", OffloadConfig.DEFAULT,
                new OffloadSetup.DiskSetup(diskDir, 1L << 30, DiskWritePolicy.THROUGH, DiskFsync.NONE, 1, null));
        Engine e = LlamaRunner.engine(Models.load(Gemma3EngineTest.MODEL, new DigestCache(tmp.resolve("digests"))),
                config.withStopToken(-1), Kernels.best(), 2, setup);
        e.offload().awaitDiskScan(Duration.ofSeconds(30));
        return e;
    }

    private static Request request(int i) {
        return new Request(i, Gemma3EngineTest.REFS.get(i).promptIds(), 32, SamplingParams.GREEDY, ExtraKeys.NONE);
    }

    private static void assertReference(Request r, int i) {
        assertThat(r.outputIds()).as("prompt %s", Gemma3EngineTest.REFS.get(i).promptKind())
                .containsExactly(Gemma3EngineTest.REFS.get(i).generatedIds());
    }

    /** Every prompt alone, the device prefix cache dropped before each; checks each against llama.cpp. */
    private static List<Request> onePerPass(Engine e, int firstId) {
        List<Request> done = new ArrayList<>();
        for (int i = 0; i < Gemma3EngineTest.REFS.size(); i++) {
            e.resetDevicePrefixCache();
            Request r = request(i);
            r = new Request(firstId + i, r.promptIds(), 32, SamplingParams.GREEDY, ExtraKeys.NONE);
            e.submit(r);
            e.runToCompletion();
            e.drainTransfers();
            e.checkKvInvariants();
            assertReference(r, i);
            done.add(r);
        }
        return done;
    }

    private static OffloadStats window(Engine e) {
        return e.offload().windowParts().getFirst().stats();
    }

    @Test
    void hostAndDiskTiersPerGroupGiveLlamaCppsTokens() {
        Path disk = tmp.resolve("disk");
        try (Engine e = engine(EngineConfig.of(16, 36).withMaxBatchTokens(512), disk)) {
            assertThat(e.kvCacheManager().groups()).hasSize(2);
            assertThat(e.offload().windowParts()).hasSize(1);
            // All three at once on 36 blocks: preemptions, with stores and loads in both groups.
            List<Request> all = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                all.add(request(i));
                e.submit(all.getLast());
            }
            e.runToCompletion();
            e.drainTransfers();
            for (int i = 0; i < 3; i++) {
                assertReference(all.get(i), i);
            }
            assertThat(e.stats().preemptions()).as("preemptions").isPositive();
            e.offload().checkInvariants();

            List<Request> first = onePerPass(e, 10);
            List<Request> second = onePerPass(e, 20);
            // One prefill step each (chunk 512): the window group stored only the blocks still in the
            // window at the prompt's end. The short prompt (31 tokens) has one full block, which left
            // the window (positions 16-30) in that step: no boundary both groups serve, no hit. The
            // story prompt (56) hits 3 blocks (window block 2), the long one (422) 26 (window block 25).
            assertThat(second.stream().map(r -> r.externalHitTokens().getOrDefault("host", 0)).toList())
                    .containsExactly(0, 48, 416);
            assertThat(window(e).blocksLoaded().getOrDefault("host", 0L)).as("window group's blocks loaded").isPositive();
            assertThat(e.offload().stats().loadFailures() + window(e).loadFailures()).isZero();
            e.offload().checkInvariants();
            assertThat(first).hasSize(3);
        }
        // A restarted engine finds both groups' chunks on disk and promotes them into the host tiers.
        try (Engine e = engine(EngineConfig.of(16, 36).withMaxBatchTokens(512), disk)) {
            // The restart scan's figures (summary, /metrics) count both groups' chunk files, as
            // the disk tier's usage does; a trial found only group 0's counted.
            EngineSnapshot.Offload o = e.snapshot().offload();
            long group0 = o.groups().get(0).diskScan().chunksFound();
            long group1 = o.groups().get(1).diskScan().chunksFound();
            assertThat(group1).as("window group's chunks found").isPositive();
            assertThat(o.diskScan().chunksFound()).isEqualTo(group0 + group1).isEqualTo(o.tiers().get(1).used());
            assertThat(o.diskScan().filesListed()).isEqualTo(
                    o.groups().get(0).diskScan().filesListed() + o.groups().get(1).diskScan().filesListed());
            assertThat(o.diskScan().ended()).isTrue();
            List<Request> done = onePerPass(e, 30);
            assertThat(done.stream().mapToLong(r -> r.externalHitTokens().getOrDefault("disk", 0)).sum())
                    .as("disk hits after a restart").isPositive();
            assertThat(window(e).blocksLoaded().getOrDefault("host", 0L)).as("window group's loads").isPositive();
            assertThat(e.offload().stats().loadFailures() + window(e).loadFailures()).isZero();
        }
    }

    /**
     * The closing note's numbers: a fresh engine with a host tier, each prompt alone with the device
     * cache cleared, twice; per request the blocks each group stored (first pass) and loaded (second
     * pass), in bytes (full group 4,096 B a block, window group 20,480 B), against storing or loading
     * the same blocks of every layer (24,576 B a block: one group holding every layer, as before).
     */
    @Test
    void bytesPerRequestWithPerGroupRules() {
        OffloadSetup host = new OffloadSetup(16L << 20, 0, "lru", OffloadConfig.DEFAULT);
        try (Engine e = LlamaRunner.engine(Models.load(Gemma3EngineTest.MODEL, new DigestCache(tmp.resolve("digests"))),
                EngineConfig.of(16, 64).withMaxBatchTokens(512).withStopToken(-1), Kernels.best(), 2, host)) {
            long[][] stored = new long[3][2];
            long[][] loaded = new long[3][2];
            for (int pass = 0; pass < 2; pass++) {
                for (int i = 0; i < 3; i++) {
                    long[] s0 = blocks(e, true), l0 = blocks(e, false);
                    onePerPassOf(e, 100 * pass + i, i);
                    long[] s1 = blocks(e, true), l1 = blocks(e, false);
                    for (int g = 0; g < 2; g++) {
                        stored[i][g] += s1[g] - s0[g];
                        loaded[i][g] += l1[g] - l0[g];
                    }
                }
            }
            long[] per = {4096, 20480};
            for (int i = 0; i < 3; i++) {
                System.out.printf("gemma3 %s prompt: stored %d + %d B (full %d blocks, window %d) vs %d B every layer; "
                                + "loaded %d + %d B (full %d, window %d) vs %d B%n", Gemma3EngineTest.REFS.get(i).promptKind(),
                        stored[i][0] * per[0], stored[i][1] * per[1], stored[i][0], stored[i][1], stored[i][0] * ALL_LAYERS_BLOCK,
                        loaded[i][0] * per[0], loaded[i][1] * per[1], loaded[i][0], loaded[i][1], loaded[i][0] * ALL_LAYERS_BLOCK);
            }
            // Prompt blocks (the default: every block holding a prompt token, the one the prompt ends in
            // filled during decode): the full group stores all of them; the window group only those still
            // in the window when they fill: the block the prompt ends in, and the story's and long
            // prompt's last block filled by the prefill step (blocks 2 and 25). The second pass stores nothing.
            assertThat(stored).isDeepEqualTo(new long[][] {{2, 1}, {4, 2}, {27, 2}});
            assertThat(loaded).isDeepEqualTo(new long[][] {{0, 0}, {3, 1}, {26, 1}});
            assertSnapshotCountsEveryGroup(e.snapshot());
        }
    }

    /**
     * What the summary, the stats JSON and {@code /metrics} read after {@link #bytesPerRequestWithPerGroupRules}:
     * blocks and bytes of both groups (33 + 5 blocks stored, 29 + 2 loaded; 4,096 B a full-group
     * block, 20,480 B a window block), hit tokens once (48 + 416, group 0's), and each group's own.
     */
    private static void assertSnapshotCountsEveryGroup(EngineSnapshot s) {
        EngineSnapshot.Offload o = s.offload();
        assertThat(o.groups()).hasSize(2);
        assertThat(o.groups().get(0).blocksStored()).isEqualTo(Map.of("host", 33L));
        assertThat(o.groups().get(1).blocksStored()).isEqualTo(Map.of("host", 5L));
        assertThat(o.blocksStored()).isEqualTo(Map.of("host", 38L));
        assertThat(o.groups().get(0).blocksLoaded()).isEqualTo(Map.of("host", 29L));
        assertThat(o.groups().get(1).blocksLoaded()).isEqualTo(Map.of("host", 2L));
        assertThat(o.blocksLoaded()).isEqualTo(Map.of("host", 31L));
        assertThat(o.groups().get(1).stores().get("host").bytes()).isEqualTo(5 * 20_480L);
        assertThat(o.stores().get("host").bytes()).isEqualTo(33 * 4_096L + 5 * 20_480L);
        assertThat(o.loads().get("host").bytes()).isEqualTo(29 * 4_096L + 2 * 20_480L);
        assertThat(o.stores().get("host").jobs())
                .isEqualTo(o.groups().get(0).stores().get("host").jobs() + o.groups().get(1).stores().get("host").jobs());
        assertThat(s.engine().externalHitTokensByTier()).isEqualTo(Map.of("host", 464L));
        assertThat(o.tiers().getFirst().used()).isEqualTo(38);
        assertThat(o.tiers().getFirst().capacity())
                .isEqualTo(o.groups().get(0).tiers().getFirst().capacity() + o.groups().get(1).tiers().getFirst().capacity());
    }

    private static void onePerPassOf(Engine e, int id, int i) {
        e.resetDevicePrefixCache();
        Request r = new Request(id, Gemma3EngineTest.REFS.get(i).promptIds(), 32, SamplingParams.GREEDY, ExtraKeys.NONE);
        e.submit(r);
        e.runToCompletion();
        e.drainTransfers();
        assertReference(r, i);
    }

    /** Host-tier blocks stored (or loaded) so far by group 0 and the window group. */
    private static long[] blocks(Engine e, boolean stored) {
        OffloadScheduler full = e.offload();
        OffloadStats w = window(e);
        return stored ? new long[] {full.stats().blocksStored().getOrDefault("host", 0L), w.blocksStored().getOrDefault("host", 0L)}
                : new long[] {full.stats().blocksLoaded().getOrDefault("host", 0L), w.blocksLoaded().getOrDefault("host", 0L)};
    }
}

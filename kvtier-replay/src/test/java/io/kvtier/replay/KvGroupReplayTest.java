package io.kvtier.replay;

import static io.kvtier.replay.ReplayTraces.instant;
import static io.kvtier.replay.ReplayTraces.req;
import static io.kvtier.replay.ReplayTraces.trace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.replay.trace.Trace;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The replay's hybrid cost model on hand-made traces: per-group rules through the real engine
 * (KV groups on the device, an offload part per window group, {@code WindowParts}), with the
 * bytes each group stores and loads computed by hand. Blocks of 512 tokens, instant mode (each
 * prompt is prefilled in one step, then its first token ends it).
 */
class KvGroupReplayTest {

    /** Group 0: full, layer 2 (1 layer); group 1: window 1024, layers 0 and 1; 1,000 B per token per layer. */
    private static final KvGroupLayout W1024 = new KvGroupLayout("test-w1024", new int[] {1024, 1024, 0}, 1000);
    /** Group 0: full, layer 1; group 1: window 512 (one block: the window ending at n blocks is block n-1), layer 0. */
    private static final KvGroupLayout W512 = new KvGroupLayout("test-w512", new int[] {512, 0}, 1000);

    private static final long FULL_BLOCK = 512L * 1000;      // group 0: 1 layer
    private static final long WINDOW_BLOCK = 512L * 2 * 1000; // group 1 of W1024: 2 layers

    private static ReplayResult run(Trace t, Capacity host, KvGroupLayout layout) {
        return Replay.run(t, instant(host, Policy.LRU).withKvGroups(layout), Progress.none());
    }

    @Test
    void theGroupsStoreAndLoadExactlyTheBlocksTheirRulesAllow() {
        Trace t = trace(
                // r0: 6 full blocks, no hit. Prefilled in one step: the next query (position 3072)
                // reads from position 2049 = block 4, so the window group stores blocks 4 and 5
                // (blocks 0-3 left the window in the step that filled them); the full group all 6.
                req(3072, 0, 1, 2, 3, 4, 5),
                // r1: 7 other full blocks; fills the 7-block device pool ('min': this request), so
                // nothing of r0 stays on the device. Window: from (3584 - 1023) / 512 = block 5: 5, 6.
                req(3584, 10, 11, 12, 13, 14, 15, 16),
                // r2: r0's 6 blocks and a partial 7th: the hit is 6 blocks (the last token is never
                // a hit); the window ending at 6 blocks is blocks (3072 - 1023) / 512 = 4 and 5,
                // which r0 stored: loaded are 6 blocks of the full group and 2 of the window group.
                req(3172, 0, 1, 2, 3, 4, 5, 6));
        ReplayResult r = run(t, Capacity.INF, W1024);
        assertThat(r.hitTokensByRequest()).containsExactly(0, 0, 3072);
        assertThat(r.hostHitTokens()).isEqualTo(3072);
        ReplayResult.KvTraffic k = r.kvTraffic();
        assertThat(k.groups()).hasSize(2);
        ReplayResult.GroupTraffic full = k.groups().get(0);
        ReplayResult.GroupTraffic window = k.groups().get(1);
        assertThat(List.of(full.window(), full.layers(), window.window(), window.layers())).containsExactly(0, 1, 1024, 2);
        assertThat(full.bytesPerBlock()).isEqualTo(FULL_BLOCK);
        assertThat(window.bytesPerBlock()).isEqualTo(WINDOW_BLOCK);
        assertThat(full.blocksStored()).isEqualTo(6 + 7);
        assertThat(window.blocksStored()).isEqualTo(2 + 2);
        assertThat(window.windowBlocksSkipped()).isEqualTo(4 + 5);
        assertThat(full.blocksLoaded()).isEqualTo(6);
        assertThat(window.blocksLoaded()).isEqualTo(2);
        assertThat(k.bytesStored()).isEqualTo(13 * 512_000L + 4 * 1_024_000L).isEqualTo(10_752_000L);
        assertThat(k.bytesLoaded()).isEqualTo(6 * 512_000L + 2 * 1_024_000L).isEqualTo(5_120_000L);
        assertThat(r.bytesStored()).isEqualTo(k.bytesStored());
        assertThat(r.bytesLoaded()).isEqualTo(k.bytesLoaded());

        // Every block of every layer: the same hits, 13 stored and 6 loaded blocks of 3 layers.
        ReplayResult all = run(t, Capacity.INF, W1024.allFull());
        assertThat(all.hitTokensByRequest()).containsExactly(0, 0, 3072);
        assertThat(all.kvTraffic().groups()).hasSize(1);
        assertThat(all.bytesStored()).isEqualTo(13 * 1_536_000L).isEqualTo(19_968_000L);
        assertThat(all.bytesLoaded()).isEqualTo(6 * 1_536_000L).isEqualTo(9_216_000L);
    }

    @Test
    void aHitWhoseWindowBlockWasEvictedIsCut() {
        // Window 512: the window ending at n blocks is block n-1. Host tier of 3 blocks per group.
        Trace t = trace(
                req(1024, 1, 2),                 // r0: no hit; full stores A B, window B (the next query reads from 513)
                req(1537, 1, 2, 3, 4),           // r1: device hit A B (window B on the device); stores full C, window C
                // r2-r4: device hit A B C (window C); the full group stores none of their blocks (a
                // chain longer than the host tier is stored up to its capacity: A B C, all there),
                // the window group stores each one's last block G: three new blocks push B (and
                // then C) out of the window group's host part, and their allocations push r1's
                // slid-out B out of the window group's device pool.
                req(3072, 1, 2, 3, 10, 11, 12),
                req(3072, 1, 2, 3, 20, 21, 22),
                req(3072, 1, 2, 3, 30, 31, 32),
                // r5: the full group holds A B on the device and in the host, but the window ending
                // at 2 blocks (B) is nowhere and the one ending at 1 (A) was never stored: no hit.
                req(1025, 1, 2, 5));
        ReplayResult r = run(t, Capacity.tokens(3 * 512), W512);
        assertThat(r.hitTokensByRequest()).containsExactly(0, 1024, 1536, 1536, 1536, 0);
        ReplayResult.GroupTraffic full = r.kvTraffic().groups().get(0);
        ReplayResult.GroupTraffic window = r.kvTraffic().groups().get(1);
        assertThat(full.blocksStored()).isEqualTo(2 + 1);
        assertThat(window.blocksStored()).isEqualTo(1 + 1 + 3 + 1); // r5 stores B again
        assertThat(full.blocksLoaded() + window.blocksLoaded()).isZero();

        // With every layer in one group, r5's 2-block prefix is a device hit.
        ReplayResult all = run(t, Capacity.tokens(3 * 512), W512.allFull());
        assertThat(all.hitTokensByRequest()).containsExactly(0, 1024, 1536, 1536, 1536, 1024);
        assertThat(all.hostChunksWritten()).isEqualTo(3);
    }

    @Test
    void allFullLayersGiveTodaysReplayTimesTheLayers() {
        // The same seeded trace, bounded host tier (evictions), once as today's one-group model at
        // 1,000 B per token and once with 3 full layers of 1,000 B: the same hits, blocks and
        // evictions; bytes x 3.
        Trace t = ReplayTraces.random(7, 300, 8);
        ReplayConfig today = instant(Capacity.tokens(20 * 512), Policy.LRU)
                .withCost(ReplayConfig.defaults(ReplayConfig.Mode.INSTANT).cost().withKvBytesPerToken(1000));
        ReplayResult a = Replay.run(t, today, Progress.none());
        ReplayResult b = Replay.run(t, today.withKvGroups(W1024.allFull()), Progress.none());
        assertThat(a.kvTraffic()).isNull();
        assertThat(a.hostEvictions()).isPositive();
        assertThat(b.hitTokensByRequest()).containsExactly(a.hitTokensByRequest());
        assertThat(b.hostChunksWritten()).isEqualTo(a.hostChunksWritten());
        assertThat(b.deviceChunksLoaded()).isEqualTo(a.deviceChunksLoaded()).isPositive();
        assertThat(b.hostEvictions()).isEqualTo(a.hostEvictions());
        assertThat(b.bytesStored()).isEqualTo(3 * a.bytesStored()).isEqualTo(3 * a.hostChunksWritten() * 512_000L);
        assertThat(b.bytesLoaded()).isEqualTo(3 * a.bytesLoaded()).isPositive();
    }

    @Test
    void theGemma3LayoutIsTenFullLayersAndFiftyTwoWindowLayers() {
        KvGroupLayout g = KvGroupLayout.named("gemma3-27b");
        assertThat(g.groups()).hasSize(2);
        assertThat(g.groups().get(0).layers()).containsExactly(5, 11, 17, 23, 29, 35, 41, 47, 53, 59);
        assertThat(g.groups().get(1).window()).isEqualTo(1024);
        assertThat(g.groups().get(1).layers()).hasSize(52);
        assertThat(g.bytesPerToken()).isEqualTo(62L * 16 * 128 * 2 * 2).isEqualTo(507_904L);
        assertThat(g.bytesPerToken(g.groups().get(0))).isEqualTo(81_920L);
        assertThat(KvGroupLayout.named("gemma3-27b-all-full")).isEqualTo(g.allFull());
        ReplayConfig c = instant(Capacity.INF, Policy.LRU);
        assertThat(c.withKvGroups(g).cost().describe()).as("the report names whose compute and whose KV")
                .startsWith(c.cost().name() + " compute with gemma3-27b KV: KV 507,904 B/token");
        assertThat(g.allFull().hybrid()).isFalse();
        assertThatThrownBy(() -> KvGroupLayout.named("gemma4")).hasMessageContaining("gemma3-27b, gemma3-27b-all-full");
    }

    @Test
    void theHybridModelRefusesWhatItDoesNotModel() {
        ReplayConfig c = instant(Capacity.INF, Policy.LRU);
        assertThatThrownBy(() -> c.withKvGroups(W512).withCost(c.cost()))
                .hasMessageContaining("--kv-groups test-w512 has 2000 KV bytes per token, the cost model 131072");
        assertThatThrownBy(() -> new ReplayConfig(c.mode(), c.policy(), c.device(), c.host(), Capacity.INF, 512, 1,
                c.withKvGroups(W512).cost(), 0, 1, 1, ReplayConfig.Remote.NONE, c.storePolicy(), c.loadPolicy(), W512))
                .hasMessageContaining("host tier only");
    }
}

package io.kvtier.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.model.Kernels;
import io.kvtier.model.Models;
import io.kvtier.model.DigestCache;
import io.kvtier.offload.DiskWritePolicy;
import io.kvtier.offload.GroupStats;
import io.kvtier.offload.OffloadConfig;
import io.kvtier.tier.disk.DiskFsync;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The gemma3 fixture's two KV groups share the host and disk budgets by bytes per block (4,096 B
 * full, 20,480 B window): a budget too small for either group's share to hold one chunk is refused
 * with the flag and the smallest budget that works, and that smallest budget gives each group one
 * chunk, the slabs together within it.
 */
class Gemma3TierBudgetTest {

    @TempDir
    Path tmp;

    /** Host slots: header area (16 token ids) + payload, 64-byte aligned: 192 + 4,096 and 192 + 20,480 B. */
    private static final long SMALLEST_HOST = 25_728; // the full group's share: 4,288 x 24,576 / 4,096

    private Engine engine(OffloadSetup setup) {
        return LlamaRunner.engine(Models.load(Gemma3EngineTest.MODEL, new DigestCache(tmp.resolve("digests"))),
                EngineConfig.of(16, 36).withStopToken(-1), Kernels.best(), 1, setup);
    }

    @Test
    void aHostBudgetTooSmallForEveryGroupNamesTheFlagAndTheMinimum() {
        assertThatThrownBy(() -> engine(new OffloadSetup(SMALLEST_HOST - 1, 0, "lru", OffloadConfig.DEFAULT)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--host-cache-bytes 25727 cannot hold one chunk of each of the model's 2 KV groups "
                        + "(they share it by bytes per block): give at least 25728");
        try (Engine e = engine(new OffloadSetup(SMALLEST_HOST, 0, "lru", OffloadConfig.DEFAULT))) {
            long reserved = 0;
            for (var g : GroupStats.schedulers(e.offload())) {
                assertThat(g.host().index().capacity()).as("chunks of each group").isEqualTo(1);
                reserved += g.host().slab().byteSize();
            }
            assertThat(reserved).isEqualTo(4_288 + 20_672).isLessThanOrEqualTo(SMALLEST_HOST);
        }
    }

    @Test
    void aDiskBudgetTooSmallForEveryGroupNamesTheFlagAndTheMinimum() {
        OffloadSetup.DiskSetup disk = new OffloadSetup.DiskSetup(tmp.resolve("disk"), 30_000, DiskWritePolicy.THROUGH,
                DiskFsync.NONE, 1, null);
        assertThatThrownBy(() -> engine(new OffloadSetup(1L << 20, 0, "lru", OffloadConfig.DEFAULT, disk)))
                .isInstanceOf(IllegalArgumentException.class)
                // Files take 4 KiB units: 8,192 B (full) and 24,576 B (window); the full group's share decides.
                .hasMessage("--disk-cache-bytes 30000 cannot hold one chunk of each of the model's 2 KV groups "
                        + "(they share it by bytes per block): give at least 49152");
    }

    /**
     * The remote write budget is no share: every group writes within all of it, so it must hold
     * the larger value, the window group's 192 + 20,480 B (full group: 192 + 4,096 B).
     */
    @Test
    void aRemoteWriteBudgetBelowTheLargestGroupsValueIsRefused() {
        var remote = new OffloadSetup.RemoteSetup(io.kvtier.tier.remote.RemoteSettings.of(java.util.List.of("redis://127.0.0.1:1"),
                false, "t", null), DiskWritePolicy.THROUGH, 1, 20_671, line -> { });
        assertThatThrownBy(() -> engine(new OffloadSetup(1L << 20, 0, "lru", OffloadConfig.DEFAULT).withRemote(remote)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--remote-max-in-flight 20671 cannot hold one chunk's value of 20672 bytes (header and payload, the "
                        + "largest of the model's 2 KV groups), so every write to the remote tier would be dropped: give at least 20672");
    }
}

package io.kvtier.replay;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.replay.trace.MooncakeTraces;
import io.kvtier.replay.trace.Trace;
import java.io.IOException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Pins the hits of {@code lhd} and {@code duel} on the first 1,500 requests of the conversation
 * trace (instant, device {@code min}), host tier alone and with a disk tier behind it: figures taken
 * from the build before {@link io.kvtier.tier.HitDensityPolicy}'s victim order was cached, so any
 * change of speed that changes a single eviction decision fails here. {@code duel} differs from both
 * {@code lru} and {@code lhd} in every cell (it switches between them), and with the disk tier it runs
 * the disk-aware shadows.
 */
class DuelReplayPinTest {

    private static Trace head;

    @BeforeAll
    static void read() throws IOException {
        head = MooncakeTraces.read(MooncakeTraces.CONVERSATION).firstRequests(1500);
    }

    private static ReplayResult run(Policy p, Capacity host, Capacity disk) {
        return Replay.run(head, ReplayTraces.instant(host, p).withDisk(disk), Progress.none());
    }

    @Test
    void hitDensityAndDuelHitExactlyAsBefore() {
        Capacity none = Capacity.tokens(0);
        assertThat(run(Policy.LRU, Capacity.tokens(1_000_000), none).hitTokens()).isEqualTo(979_456L);
        assertThat(run(Policy.LHD, Capacity.tokens(500_000), none).hitTokens()).isEqualTo(1_044_992L);
        assertThat(run(Policy.LHD, Capacity.tokens(1_000_000), none).hitTokens()).isEqualTo(1_147_392L);
        ReplayResult d500k = run(Policy.DUEL, Capacity.tokens(500_000), none);
        assertThat(d500k.hitTokens()).isEqualTo(1_001_472L);
        assertThat(d500k.hostEvictions()).isEqualTo(37_280L);
        ReplayResult d1m = run(Policy.DUEL, Capacity.tokens(1_000_000), none);
        assertThat(d1m.hitTokens()).isEqualTo(1_158_656L);
        assertThat(d1m.hostEvictions()).isEqualTo(35_985L);
    }

    @Test
    void withADiskTierBehindTheHostDuelHitsExactlyAsBefore() {
        Capacity disk = Capacity.tokens(1_000_000);
        assertThat(run(Policy.LRU, Capacity.tokens(250_000), disk).hitTokens()).isEqualTo(979_456L);
        // 1,178,112 before a host hit touched the disk's copy (the disk runs lhd too, and its order changed);
        // lru and duel (whose disk runs lru) did not change there
        assertThat(run(Policy.LHD, Capacity.tokens(250_000), disk).hitTokens()).isEqualTo(1_168_896L);
        ReplayResult d = run(Policy.DUEL, Capacity.tokens(250_000), disk);
        assertThat(d.hitTokens()).isEqualTo(1_030_144L);
        assertThat(d.hostEvictions()).isEqualTo(37_878L);
    }
}

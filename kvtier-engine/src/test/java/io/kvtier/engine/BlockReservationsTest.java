package io.kvtier.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.kv.BlockHasher;
import io.kvtier.kv.BlockPool;
import io.kvtier.kv.KvCacheManager;
import io.kvtier.kv.KvLayout;
import io.kvtier.kv.Namespace;
import io.kvtier.offload.Contention;
import io.kvtier.offload.Lookup;
import io.kvtier.kv.ExtraKeys;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link BlockReservations}: a request passing one that waits for device blocks is charged its
 * whole prompt, and passes only while the waiting one would still wait with that charge added.
 */
class BlockReservationsTest {

    private static final int BS = 4;

    private final KvLayout layout = FingerprintModelRunner.layout(BS);
    private final BlockPool pool = new BlockPool(16, layout);
    private final KvCacheManager kv = new KvCacheManager(pool, true);
    private final BlockHasher hasher = BlockHasher.sha256(Namespace.of("fingerprint", layout, 1));
    private long now;
    /** Every "still pays?" query: the missing blocks it was asked about. */
    private final List<Integer> asked = new ArrayList<>();
    /** A fake of the stores in flight: they free at most 10 blocks, so a wait pays up to 10 blocks short. */
    private final BlockReservations.WaitQuery fakeStoresFreeTen = (hitBlocks, hit, missing, waited, c) -> {
        asked.add(missing);
        return missing <= 10;
    };
    private final BlockReservations reservations = new BlockReservations(kv, () -> now, fakeStoresFreeTen);

    private Request request(long id, int tokens) {
        return request(id, tokens, id);
    }

    /** A request of {@code tokens} tokens that depend on {@code seed} only (same seed: same prefix). */
    private Request request(long id, int tokens, long seed) {
        int[] prompt = new int[tokens];
        for (int i = 0; i < tokens; i++) {
            prompt[i] = (int) (1 + seed * 100 + i);
        }
        Request r = new Request(id, prompt, 4, SamplingParams.GREEDY, ExtraKeys.NONE);
        r.extendKeys(hasher, BS);
        return r;
    }

    @Test
    void passersAreChargedTheirWholePromptAndStopWhenTheWaitNoLongerPays() {
        assertThat(kv.admit(99, request(99, 48).blockKeys(), 0, 48)).isTrue(); // 12 of 16 blocks held: 4 free
        Request waiter = request(1, 24);
        Contention c = new Contention(3, true, 64);
        var hit = new Lookup.Hit("host", 6);
        reservations.startPass();
        assertThat(reservations.mayPass(request(2, 40), 0)).as("nobody waits yet: nothing charged").isZero();
        assertThat(asked).isEmpty();
        reservations.hold(waiter, 0, hit, 2, c); // needs 6, 4 free: 2 short

        Request small = request(3, 12); // 3 blocks of prompt: 2 + 3 = 5 <= 10
        assertThat(reservations.mayPass(small, 0)).isEqualTo(3);
        reservations.passed(small, 3);
        assertThat(kv.admit(small.id(), small.blockKeys(), 0, 4)).isTrue(); // its first step: 1 block of its 3
        Request large = request(4, 24); // 6 blocks: 5 + 6 = 11 > 10
        assertThat(reservations.mayPass(large, 0)).isEqualTo(-1);
        Request medium = request(5, 20); // 5 blocks: 5 + 5 = 10
        assertThat(reservations.mayPass(medium, 0)).isEqualTo(5);
        assertThat(asked).containsExactly(5, 11, 10);

        now += 5_000_000;
        reservations.startPass();
        assertThat(reservations.waitedNanos(waiter.id())).isEqualTo(5_000_000);
        assertThat(reservations.owedToPassers(waiter.id())).as("the passer's prompt blocks not yet allocated").isEqualTo(2);
        assertThat(reservations.mayPass(large, 0)).as("no wait held in this pass yet").isZero();
        kv.free(small.id());
        assertThat(reservations.owedToPassers(waiter.id())).as("a passer that ended owes nothing").isZero();
        reservations.forget(waiter.id());
        assertThat(reservations.waitedNanos(waiter.id())).isZero();
        assertThat(reservations.owedToPassers(waiter.id())).isZero();
    }

    @Test
    void aPasserIsChargedOnlyTheBlocksItTakesFromTheFreeOnes() {
        // A request whose first 2 blocks are cached and held by another takes only its other 3 blocks.
        Request owner = request(7, 8);
        assertThat(kv.admit(owner.id(), owner.blockKeys(), 0, 8)).isTrue();
        assertThat(kv.cacheFullBlocks(owner.id(), owner.blockKeys(), 8)).hasSize(2);
        Request sharing = request(8, 20, 7); // the owner's 8 tokens, then 12 more
        assertThat(kv.prefixHitBlocks(sharing.blockKeys(), 20)).isEqualTo(2);
        reservations.startPass();
        reservations.hold(request(1, 24), 0, new Lookup.Hit("host", 6), 1, new Contention(0, true, 64));
        assertThat(reservations.mayPass(sharing, 2)).isEqualTo(3);
        assertThat(asked).containsExactly(1 + 3);
    }
}

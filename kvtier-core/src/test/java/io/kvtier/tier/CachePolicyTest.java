package io.kvtier.tier;

import static io.kvtier.tier.Keys.ids;
import static io.kvtier.tier.Keys.k;
import static io.kvtier.tier.Keys.keys;
import static io.kvtier.tier.Stores.store;
import static io.kvtier.tier.Stores.stored;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.kv.BlockKey;
import io.kvtier.tier.StorePlan.Accepted;
import org.junit.jupiter.api.Test;

class CachePolicyTest {

    @Test
    void m02_touchKeepsThePrefixHeadHottest() {
        LruPolicy lru = new LruPolicy();
        TierIndex tier = new TierIndex("host", 3, lru, KvEvents.discarding());
        stored(tier, 5);
        stored(tier, 6);
        stored(tier, 7);
        assertThat(ids(lru.recencyOrder())).containsExactly(5L, 6L, 7L); // before: 5 would go first

        tier.touch(keys(5, 6, 7));
        assertThat(ids(lru.victims(3, key -> true))).containsExactly(7L, 6L, 5L);

        assertThat(ids(stored(tier, 100).evicted())).containsExactly(7L);
        assertThat(ids(stored(tier, 101).evicted())).containsExactly(6L);
        assertThat(ids(stored(tier, 102).evicted())).containsExactly(5L);
    }

    @Test
    void lruInsertionOfAChainAlsoKeepsItsHeadHottest() {
        LruPolicy lru = new LruPolicy();
        lru.insert(keys(1, 2, 3));
        assertThat(ids(lru.victims(3, key -> true))).containsExactly(3L, 2L, 1L);
        assertThat(ids(lru.victims(2, key -> key.w3() != 3))).containsExactly(2L, 1L);
    }

    @Test
    void m03_arcInsertPromoteGhostsAdaptAndNoGhostForFailedStores() {
        ArcPolicy arc = new ArcPolicy(4);
        TierIndex tier = new TierIndex("host", 4, arc, KvEvents.discarding());

        stored(tier, 1);
        assertThat(ids(arc.t1())).containsExactly(1L); // insertion goes to T1
        tier.touch(keys(1));
        assertThat(arc.t1()).isEmpty();                  // a second touch promotes to T2
        assertThat(ids(arc.t2())).containsExactly(1L);

        stored(tier, 2);
        stored(tier, 3);
        stored(tier, 4);
        assertThat(ids(arc.t1())).containsExactly(2L, 3L, 4L);
        assertThat(arc.target()).isZero();

        // |T1| = 3 > p = 0: victims come from T1 and leave ghosts in B1.
        assertThat(ids(stored(tier, 5).evicted())).containsExactly(2L);
        assertThat(ids(arc.b1())).containsExactly(2L);
        assertThat(ids(stored(tier, 6).evicted())).containsExactly(3L);
        // |T1| + |B1| <= c: T1 = [4,5,6] leaves room for one ghost, the older one (2) goes.
        assertThat(ids(arc.t1())).containsExactly(4L, 5L, 6L);
        assertThat(ids(arc.b1())).containsExactly(3L);

        // Ghost hit in B1: storing 3 again raises p by max(1, |B2|/|B1|) = 1 and 3 enters T2.
        assertThat(ids(stored(tier, 3).evicted())).containsExactly(4L);
        assertThat(arc.target()).isEqualTo(1);
        assertThat(ids(arc.t2())).containsExactly(1L, 3L);
        assertThat(ids(arc.b1())).containsExactly(4L);

        // With T1's entries pinned by a load, the victim comes from T2 and leaves a ghost in B2.
        tier.prepareLoad(keys(5, 6));
        assertThat(ids(stored(tier, 7).evicted())).containsExactly(1L);
        tier.completeLoad(keys(5, 6));
        assertThat(ids(arc.b2())).containsExactly(1L);
        assertThat(ids(arc.t2())).containsExactly(3L);
        assertThat(ids(arc.t1())).containsExactly(5L, 6L, 7L);

        // Ghost hit in B2: p falls by max(1, |B1|/|B2|); |B1| = 2 after 5 is evicted, |B2| = 1.
        assertThat(ids(stored(tier, 1).evicted())).containsExactly(5L);
        assertThat(arc.target()).isZero();
        assertThat(ids(arc.t2())).containsExactly(3L, 1L);
        assertThat(arc.b2()).isEmpty();
        assertThat(ids(arc.b1())).containsExactly(4L, 5L);

        // Ghosts stay bounded by the capacity whatever happens.
        for (long i = 100; i < 140; i++) {
            stored(tier, i);
            if (i % 3 == 0) {
                tier.touch(keys(i));
            }
            assertThat(arc.b1().size() + arc.b2().size()).isLessThanOrEqualTo(4);
            assertThat(arc.t1().size() + arc.b1().size()).isLessThanOrEqualTo(4);
            assertThat(arc.t1().size() + arc.t2().size()).isEqualTo(4);
        }

        // A failed store leaves no ghost and does not move the target.
        int targetBefore = arc.target();
        Accepted failing = store(tier, 500);
        tier.completeStore(failing.toStore(), false);
        tier.checkInvariants();
        assertThat(arc.contains(k(500))).isFalse();
        assertThat(arc.b1()).doesNotContain(k(500));
        assertThat(arc.b2()).doesNotContain(k(500));
        assertThat(arc.target()).isEqualTo(targetBefore);
        // ...but the entry it evicted to make room did leave one.
        BlockKey victim = failing.evicted().getFirst();
        assertThat(arc.b1().contains(victim) || arc.b2().contains(victim)).as("victim is a ghost in %s", arc).isTrue();
    }

    @Test
    void arcRemoveLeavesNoGhostAndClearForgetsHistory() {
        ArcPolicy arc = new ArcPolicy(2);
        arc.insert(keys(1, 2));
        arc.evicted(k(1));
        arc.remove(k(2));
        assertThat(ids(arc.b1())).containsExactly(1L);
        assertThat(arc.size()).isZero();
        arc.insert(keys(1)); // B1 ghost hit
        assertThat(arc.target()).isEqualTo(1);
        arc.clear();
        assertThat(arc.target()).isZero();
        assertThat(arc.t1()).isEmpty();
        assertThat(arc.t2()).isEmpty();
        assertThat(arc.b1()).isEmpty();
        assertThat(arc.b2()).isEmpty();
    }

    @Test
    void namedPolicies() {
        assertThat(CachePolicy.named("LRU", 4)).isInstanceOf(LruPolicy.class);
        assertThat(CachePolicy.named("arc", 4)).isInstanceOf(ArcPolicy.class);
        assertThatThrownBy(() -> CachePolicy.named("fifo", 4))
                .hasMessageContaining("unknown cache policy 'fifo'");
    }

    @Test
    void aTierBehindADuelingHostEvictsAsLruAndBehindAnyOtherAsTheHost() {
        assertThat(CachePolicy.behindHost("duel", 4)).isInstanceOf(LruPolicy.class);
        assertThat(CachePolicy.behindHost("DUEL", 4).name()).isEqualTo("lru");
        assertThat(CachePolicy.behindHost("lhd", 4)).isInstanceOf(HitDensityPolicy.class);
        assertThat(CachePolicy.behindHost("arc", 4)).isInstanceOf(ArcPolicy.class);
        assertThat(CachePolicy.behindHost("lru", 4)).isInstanceOf(LruPolicy.class);
        assertThatThrownBy(() -> CachePolicy.behindHost("fifo", 4))
                .hasMessageContaining("unknown cache policy 'fifo'");
    }
}

package io.kvtier.tier;

import static io.kvtier.tier.Keys.ids;
import static io.kvtier.tier.Keys.k;
import static io.kvtier.tier.Keys.keys;
import static io.kvtier.tier.Keys.parents;
import static io.kvtier.tier.Stores.store;
import static io.kvtier.tier.Stores.stored;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.kvtier.tier.StorePlan;
import io.kvtier.tier.StorePlan.Accepted;
import org.junit.jupiter.api.Test;

/** M-catalogue style tests of {@link HitDensityPolicy}: exact victim orders on hand-made sequences. */
class HitDensityPolicyTest {

    @Test
    void beforeLearningItEvictsByRecencyTailFirst() {
        HitDensityPolicy p = new HitDensityPolicy(8, 1, 4, 2, 1000, 1.0);
        p.insert(keys(1, 2, 3)); // tick 1
        p.insert(keys(4));       // tick 2
        assertThat(ids(p.victims(4, key -> true))).containsExactly(3L, 2L, 1L, 4L);
        p.touch(keys(1));        // tick 3: 1 is the most recent now
        assertThat(ids(p.victims(4, key -> true))).containsExactly(3L, 2L, 4L, 1L);
        assertThat(ids(p.victims(4, key -> key.w3() != 3))).containsExactly(2L, 4L, 1L);
        assertThat(ids(p.victims(2, key -> true))).containsExactly(3L, 2L);
        assertThat(p.victims(0, key -> true)).isEmpty();
        p.touch(keys(99)); // not a member: ignored, but the call is a tick
        assertThat(p.contains(k(99))).isFalse();
        assertThat(p.clock()).isEqualTo(4);
    }

    @Test
    void learnedDensityKeepsYoungItemsWhoseHitIsStillAhead() {
        // Class 0 (never accessed, short call) is hit at age 2 exactly; class 3 (accessed once) never again.
        HitDensityPolicy p = new HitDensityPolicy(8, 1, 4, 2, 4, 1.0);
        LruPolicy lru = new LruPolicy();
        for (CachePolicy c : new CachePolicy[] {p, lru}) {
            c.insert(keys(1)); // tick 1
            c.insert(keys(2)); // tick 2
            c.touch(keys(1));  // tick 3: hit at age 2
            c.touch(keys(2));  // tick 4: hit at age 2; the curves are computed
            c.insert(keys(5, 6)); // tick 5
            c.insert(keys(7));    // tick 6
        }
        assertThat(p.classOf(k(1))).isEqualTo(3);
        assertThat(p.classOf(k(5))).isZero();
        assertThat(p.hitsAt(0, 2)).isEqualTo(2.0);
        // Class 0: 2 entered, both hit at age 2: density 2/6 at age 0, 2/4 at age 1, 2/2 at age 2, 0 after.
        assertThat(p.density(0, 0)).isCloseTo(1.0 / 3, within(1e-12));
        assertThat(p.density(0, 1)).isCloseTo(0.5, within(1e-12));
        assertThat(p.density(0, 2)).isCloseTo(1.0, within(1e-12));
        assertThat(p.density(0, 3)).isZero();
        assertThat(p.density(3, 0)).isZero();
        assertThat(p.density(1, 0)).as("a class nothing entered").isZero();

        // LRU evicts 5 and 6 (age 1, their hit a tick away) before 7; hit density keeps them.
        assertThat(ids(lru.victims(5, key -> true))).containsExactly(1L, 2L, 6L, 5L, 7L);
        assertThat(ids(p.victims(5, key -> true))).containsExactly(1L, 2L, 7L, 6L, 5L);
        assertThat(ids(p.victims(5, key -> true))).as("victims changes no state").containsExactly(1L, 2L, 7L, 6L, 5L);
        assertThat(ids(p.victims(5, key -> key.w3() != 7 && key.w3() != 1))).containsExactly(2L, 6L, 5L);
        assertThat(p.size()).isEqualTo(5);

        p.clear();
        assertThat(p.size()).isZero();
        assertThat(p.clock()).isZero();
        assertThat(p.ghosts()).isEmpty();
        assertThat(p.hitsAt(0, 2)).isZero();
        p.insert(keys(5, 6));
        p.insert(keys(7));
        assertThat(ids(p.victims(3, key -> true))).as("recency again after clear").containsExactly(6L, 5L, 7L);
    }

    @Test
    void m03_ghostsLearnBoundedAndNoGhostForFailedStoresOrRemovals() {
        HitDensityPolicy p = new HitDensityPolicy(2, 1, 4, 2, 1000, 1.0); // at most 4 ghosts
        TierIndex tier = new TierIndex("host", 2, p, KvEvents.discarding());
        stored(tier, 1); // tick 1
        stored(tier, 2); // tick 2
        assertThat(ids(stored(tier, 3).evicted())).containsExactly(1L);
        assertThat(ids(stored(tier, 4).evicted())).containsExactly(2L);
        assertThat(ids(stored(tier, 5).evicted())).containsExactly(3L);
        assertThat(ids(p.ghosts())).containsExactly(1L, 2L, 3L);

        // Storing 2 again evicts 4 and is a ghost hit: class 0 gets a hit at age 6 - 2 = 4 (the last bucket, 3).
        assertThat(ids(stored(tier, 2).evicted())).containsExactly(4L);
        assertThat(p.hitsAt(0, 3)).isEqualTo(1.0);
        assertThat(p.classOf(k(2))).isEqualTo(3);
        assertThat(ids(p.ghosts())).containsExactly(1L, 3L, 4L);

        // A store that fails leaves no ghost of its own key, but its victim is one; ghosts stay bounded.
        Accepted failing = store(tier, 6);
        assertThat(ids(failing.evicted())).containsExactly(5L);
        tier.completeStore(failing.toStore(), false);
        tier.checkInvariants();
        assertThat(p.contains(k(6))).isFalse();
        assertThat(ids(p.ghosts())).containsExactly(1L, 3L, 4L, 5L);
        stored(tier, 7);
        assertThat(ids(stored(tier, 8).evicted())).containsExactly(2L);
        assertThat(ids(p.ghosts())).containsExactly(3L, 4L, 5L, 2L);

        // A removal (corrupt entry) leaves no ghost.
        assertThat(tier.remove(k(8))).isTrue();
        tier.checkInvariants();
        assertThat(ids(p.ghosts())).containsExactly(3L, 4L, 5L, 2L);
        assertThat(ids(p.victims(2, key -> true))).containsExactly(7L);
    }

    @Test
    void m04_pinnedAndStoringEntriesAreNeverVictims() {
        HitDensityPolicy p = new HitDensityPolicy(3, 1, 4, 2, 1000, 1.0);
        TierIndex tier = new TierIndex("host", 3, p, KvEvents.discarding());
        stored(tier, 1);
        stored(tier, 2);
        stored(tier, 3);
        tier.prepareLoad(keys(1)); // the best victim is pinned
        Accepted a = store(tier, 10);
        assertThat(ids(a.evicted())).containsExactly(2L);
        // 10 is storing, 1 pinned: a store of two more chunks needs two victims, finds one, changes nothing.
        assertThat(tier.prepareStore(keys(20, 21), parents(20, 21))).isInstanceOf(StorePlan.Refused.class);
        tier.checkInvariants();
        assertThat(ids(p.victims(3, key -> true))).containsExactly(1L, 3L);
        tier.completeLoad(keys(1));
        tier.completeStore(a.toStore(), true);
        assertThat(ids(stored(tier, 20).evicted())).containsExactly(1L);
    }

    @Test
    void namedAndBadParameters() {
        assertThat(CachePolicy.named("LHD", 4)).isInstanceOf(HitDensityPolicy.class);
        assertThat(CachePolicy.named("lhd", 4).name()).isEqualTo("lhd");
        assertThatThrownBy(() -> new HitDensityPolicy(0)).hasMessageContaining("capacity");
        assertThatThrownBy(() -> new HitDensityPolicy(4, 1, 4, 2, 10, 0.0)).hasMessageContaining("decay");
    }
}

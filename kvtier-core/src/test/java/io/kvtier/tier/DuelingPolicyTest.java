package io.kvtier.tier;

import static io.kvtier.tier.Keys.ids;
import static io.kvtier.tier.Keys.keys;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.kvtier.kv.BlockKey;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/** {@link DuelingPolicy}: its shadows' scores and the leader it follows, against the two policies run separately. */
class DuelingPolicyTest {

    /** Hit density that learns within a few ticks (1-tick buckets, curves every 5 ticks). */
    private static HitDensityPolicy learning(int capacity) {
        return new HitDensityPolicy(capacity, 1, 8, 2, 5, 0.9);
    }

    @Test
    void withNoEvidenceItEvictsAsLru() {
        DuelingPolicy p = new DuelingPolicy(8);
        LruPolicy lru = new LruPolicy();
        for (CachePolicy c : new CachePolicy[] {p, lru}) {
            c.insert(keys(1, 2, 3));
            c.insert(keys(4));
            c.touch(keys(1));
        }
        assertThat(p.lruScore()).isEqualTo(1.0); // the touch of 1 hit both shadows
        assertThat(p.lhdScore()).isEqualTo(1.0);
        assertThat(p.lhdLeads()).isFalse(); // a tie follows LRU
        assertThat(ids(p.victims(4, k -> true))).containsExactly(3L, 2L, 4L, 1L).isEqualTo(ids(lru.victims(4, k -> true)));
    }

    @Test
    void aLoopOneLargerThanTheCacheGivesLruNoHit() {
        // Keys 1, 2, 3 in a loop through a cache of 2: LRU's shadow always evicted the next key.
        DuelingPolicy p = new DuelingPolicy(2, 1_000_000, DuelingPolicyTest::learning);
        for (int i = 0; i < 300; i++) {
            p.insert(keys(1 + i % 3));
        }
        assertThat(p.lruScore()).isZero();
        assertThat(p.lhdScore()).isPositive();
        assertThat(p.lhdLeads()).isTrue();
    }

    /**
     * Random chains against reference shadows kept here by the rule the policy documents (each
     * policy alone, capped at the capacity); the tier's own evictions follow the leader's victims;
     * the leader is LRU until hit density's score is more than the margin above LRU's, then hit density
     * until its score is no longer above LRU's.
     */
    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4})
    void scoresAreTheShadowsDecayedHitsAndVictimsAreTheLeaders(long seed) {
        int capacity = 6;
        int window = 16;
        double keep = 1.0 - 1.0 / window;
        Random rnd = new Random(seed);
        DuelingPolicy p = new DuelingPolicy(capacity, window, DuelingPolicyTest::learning);
        CachePolicy[] shadows = {new LruPolicy(), learning(capacity)};
        CachePolicy[] orders = {new LruPolicy(), learning(capacity)};
        double[] scores = new double[2];
        boolean led = false;
        boolean lruLed = false;
        boolean follow = false;
        boolean marginHeld = false; // LRU followed at a step where hit density's score was above LRU's
        boolean hysteresisHeld = false; // hit density followed with a lead below the margin
        for (int step = 0; step < 2_000; step++) {
            int start = rnd.nextInt(12);
            List<BlockKey> chain = keys(java.util.stream.LongStream.rangeClosed(1 + start, 1 + start + rnd.nextInt(3)).toArray());
            boolean touch = rnd.nextBoolean();
            List<BlockKey> seen = touch ? chain.stream().filter(p::contains).toList() : chain;
            for (int s = 0; s < 2; s++) {
                if (!seen.isEmpty()) {
                    scores[s] = scores[s] * keep + seen.stream().filter(shadows[s]::contains).count();
                    shadows[s].insert(seen);
                    int over = shadows[s].size() - capacity;
                    if (over > 0) {
                        shadows[s].victims(over, k -> true).forEach(shadows[s]::evicted);
                    }
                }
            }
            if (touch) {
                p.touch(seen);
                for (CachePolicy o : orders) {
                    o.touch(seen);
                }
            } else {
                // The tier makes room first, by the policy's victims, then stores.
                int over = p.size() + (int) chain.stream().filter(k -> !p.contains(k)).count() - capacity;
                if (over > 0) {
                    List<BlockKey> victims = p.victims(over, k -> !chain.contains(k));
                    CachePolicy leader = orders[p.lhdLeads() ? 1 : 0];
                    assertThat(victims).as("step %d", step).isEqualTo(leader.victims(over, k -> !chain.contains(k)));
                    for (BlockKey v : victims) {
                        p.evicted(v);
                        for (CachePolicy o : orders) {
                            o.evicted(v);
                        }
                    }
                }
                p.insert(chain);
                for (CachePolicy o : orders) {
                    o.insert(chain);
                }
            }
            assertThat(p.lruScore()).as("step %d", step).isCloseTo(scores[0], within(1e-9));
            assertThat(p.lhdScore()).as("step %d", step).isCloseTo(scores[1], within(1e-9));
            boolean wasFollowed = follow;
            follow = scores[1] > scores[0] * (follow ? 1 : 1 + DuelingPolicy.DEFAULT_MARGIN);
            assertThat(p.lhdLeads()).as("step %d", step).isEqualTo(follow);
            marginHeld |= !follow && scores[1] > scores[0];
            hysteresisHeld |= wasFollowed && follow && scores[1] <= scores[0] * (1 + DuelingPolicy.DEFAULT_MARGIN);
            led |= p.lhdLeads();
            lruLed |= !p.lhdLeads();
        }
        assertThat(led && lruLed).as("each policy led at some step").isTrue();
        assertThat(marginHeld && hysteresisHeld).as("the margin and the hysteresis each decided some step").isTrue();
    }
}

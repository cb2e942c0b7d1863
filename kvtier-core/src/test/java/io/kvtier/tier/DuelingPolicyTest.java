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
     * the leader is LRU until hit density's decayed lead (the sum of each call's paired difference
     * of shadow hits) exceeds z standard errors, then hit density until the lead is no longer above 0.
     */
    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4})
    void scoresAreTheShadowsDecayedHitsAndVictimsAreTheLeaders(long seed) {
        int capacity = 6;
        int window = 16;
        double keep = 1.0 - 1.0 / window;
        Random rnd = new Random(seed);
        double z = 0.5; // low enough that a random workload has significant leads both ways within 2,000 steps
        DuelingPolicy p = new DuelingPolicy(capacity, window, z, DuelingPolicyTest::learning);
        CachePolicy[] shadows = {new LruPolicy(), learning(capacity)};
        CachePolicy[] orders = {new LruPolicy(), learning(capacity)};
        double[] scores = new double[2];
        double weights = 0;
        double squaredWeights = 0;
        double squaredLeads = 0;
        double lead = 0;
        boolean led = false;
        boolean lruLed = false;
        boolean follow = false;
        boolean boundHeld = false; // LRU followed at a step where hit density's lead was above 0
        boolean hysteresisHeld = false; // hit density followed with a lead within z standard errors
        for (int step = 0; step < 2_000; step++) {
            int start = rnd.nextInt(12);
            List<BlockKey> chain = keys(java.util.stream.LongStream.rangeClosed(1 + start, 1 + start + rnd.nextInt(3)).toArray());
            boolean touch = rnd.nextBoolean();
            List<BlockKey> seen = touch ? chain.stream().filter(p::contains).toList() : chain;
            if (!seen.isEmpty()) {
                long[] hits = new long[2];
                for (int s = 0; s < 2; s++) {
                    hits[s] = seen.stream().filter(shadows[s]::contains).count();
                    scores[s] = scores[s] * keep + hits[s];
                    shadows[s].insert(seen);
                    int over = shadows[s].size() - capacity;
                    if (over > 0) {
                        shadows[s].victims(over, k -> true).forEach(shadows[s]::evicted);
                    }
                }
                double d = hits[1] - hits[0];
                lead = lead * keep + d;
                weights = weights * keep + 1;
                squaredWeights = squaredWeights * keep * keep + 1;
                squaredLeads = squaredLeads * keep + d * d;
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
            assertThat(lead).as("step %d", step).isCloseTo(scores[1] - scores[0], within(1e-9));
            double n = weights * weights / squaredWeights;
            double mean = lead / weights;
            double error = n > 1 ? Math.sqrt(squaredWeights * Math.max(0, squaredLeads / weights - mean * mean) * n / (n - 1))
                    : Double.POSITIVE_INFINITY;
            if (step > 0) {
                assertThat(p.leadStandardError()).as("step %d", step).isCloseTo(error, within(1e-9));
            }
            boolean wasFollowed = follow;
            follow = follow ? lead > 0 : lead > z * error;
            assertThat(p.lhdLeads()).as("step %d", step).isEqualTo(follow);
            boundHeld |= !follow && lead > 0;
            hysteresisHeld |= wasFollowed && follow && lead <= z * error;
            led |= p.lhdLeads();
            lruLed |= !p.lhdLeads();
        }
        assertThat(led && lruLed).as("each policy led at some step").isTrue();
        assertThat(boundHeld && hysteresisHeld).as("the bound and the hysteresis each decided some step").isTrue();
    }

    @Test
    void withEveryKeyHeldBehindTheShadowsScoreNothingAndLruIsFollowed() {
        // The loop that makes hit density lead (aLoopOneLargerThanTheCacheGivesLruNoHit), but a tier
        // behind holds every key: no hit would be lost, so neither shadow scores.
        DuelingPolicy p = new DuelingPolicy(2, 1_000_000, DuelingPolicyTest::learning);
        p.scoreOnlyWhereAbsent(k -> true);
        for (int i = 0; i < 300; i++) {
            p.insert(keys(1 + i % 3));
        }
        assertThat(p.lruScore()).isZero();
        assertThat(p.lhdScore()).isZero();
        assertThat(p.lhdLeads()).isFalse();
        // Only key 2 held behind: keys 1 and 3 still score, and hit density still leads.
        DuelingPolicy q = new DuelingPolicy(2, 1_000_000, DuelingPolicyTest::learning);
        q.scoreOnlyWhereAbsent(k -> k.equals(keys(2).getFirst()));
        DuelingPolicy all = new DuelingPolicy(2, 1_000_000, DuelingPolicyTest::learning);
        for (int i = 0; i < 300; i++) {
            q.insert(keys(1 + i % 3));
            all.insert(keys(1 + i % 3));
        }
        assertThat(q.lruScore()).isZero();
        assertThat(q.lhdScore()).isPositive().isLessThan(all.lhdScore());
        assertThat(q.lhdLeads()).isTrue();
    }
}

package io.kvtier.tier;

import static io.kvtier.tier.Keys.k;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.kv.BlockKey;
import io.kvtier.tier.TierIndex.EntryState;
import io.kvtier.tier.StorePlan;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Random operation sequences against {@link TierIndex}, checking after every step its own
 * invariants and, from outside: evictions only take READY unpinned keys not being stored,
 * refusals change nothing, and the resident set rebuilt from the events equals the readable keys.
 */
class TierIndexRandomTest {

    private static final int KEYS = 16;

    @ParameterizedTest
    @ValueSource(strings = {"lru", "arc", "lhd", "lhd-learning", "duel", "duel-learning"})
    void randomOperationsKeepEveryInvariant(String policyName) {
        for (int round = 0; round < 40; round++) {
            long seed = new Random().nextLong();
            try {
                run(policyName, seed);
            } catch (AssertionError | RuntimeException e) {
                throw new AssertionError("policy " + policyName + ", seed " + seed + ": " + e.getMessage(), e);
            }
        }
    }

    /** By name; {@code lhd-learning} is the hit density policy with tiny buckets and period, so it learns within a run ({@code duel-learning}: dueling with it). */
    private static CachePolicy policy(String name, int capacity) {
        return switch (name) {
            case "lhd-learning" -> new HitDensityPolicy(capacity, 1, 8, 2, 5, 0.9);
            case "duel-learning" -> new DuelingPolicy(capacity, 8, c -> new HitDensityPolicy(c, 1, 8, 2, 5, 0.9));
            default -> CachePolicy.named(name, capacity);
        };
    }

    private static void run(String policyName, long seed) {
        Random rnd = new Random(seed);
        int capacity = 1 + rnd.nextInt(6);
        KvEvents events = KvEvents.buffered();
        TierIndex tier = new TierIndex("host", capacity, policy(policyName, capacity), events);
        List<List<BlockKey>> stores = new ArrayList<>();
        List<List<BlockKey>> loads = new ArrayList<>();
        Set<BlockKey> resident = new HashSet<>();

        for (int step = 0; step < 400; step++) {
            Map<BlockKey, EntryState> before = states(tier);
            int op = rnd.nextInt(100);
            if (op < 30) {
                int start = rnd.nextInt(KEYS);
                int len = 1 + rnd.nextInt(Math.min(4, KEYS - start));
                List<BlockKey> chain = new ArrayList<>();
                List<BlockKey> parents = new ArrayList<>();
                for (int i = start; i < start + len; i++) {
                    chain.add(k(i));
                    parents.add(k(i - 1));
                }
                StorePlan plan = tier.prepareStore(chain, parents);
                switch (plan) {
                    case StorePlan.Refused r -> assertThat(states(tier)).as("refusal changed nothing").isEqualTo(before);
                    case StorePlan.Accepted a -> {
                        for (BlockKey v : a.evicted()) {
                            assertThat(before.get(v)).as("victim state").isEqualTo(EntryState.READY);
                            assertThat(chain).as("victim is not being stored").doesNotContain(v);
                        }
                        for (BlockKey s : a.toStore()) {
                            assertThat(before.get(s)).as("stored key was absent").isEqualTo(EntryState.ABSENT);
                            assertThat(tier.state(s)).isEqualTo(EntryState.STORING);
                        }
                        if (!a.toStore().isEmpty()) {
                            stores.add(a.toStore());
                        }
                    }
                }
            } else if (op < 55 && !stores.isEmpty()) {
                List<BlockKey> done = stores.remove(rnd.nextInt(stores.size()));
                int good = rnd.nextInt(4) == 0 ? rnd.nextInt(done.size() + 1) : done.size();
                tier.completeStore(done.subList(0, good), true);
                tier.completeStore(done.subList(good, done.size()), false);
            } else if (op < 70) {
                List<BlockKey> chain = new ArrayList<>();
                for (int i = rnd.nextInt(KEYS); i < KEYS && chain.size() < 4; i++) {
                    chain.add(k(i));
                }
                int ready = tier.lookup(chain).readyChunks();
                if (ready > 0) {
                    tier.touch(chain.subList(0, ready));
                    tier.prepareLoad(chain.subList(0, ready));
                    loads.add(List.copyOf(chain.subList(0, ready)));
                }
            } else if (op < 85 && !loads.isEmpty()) {
                tier.completeLoad(loads.remove(rnd.nextInt(loads.size())));
            } else if (op < 95) {
                tier.remove(k(rnd.nextInt(KEYS)));
            } else if (op < 97) {
                tier.clear();
            } else {
                tier.touch(List.of(k(rnd.nextInt(KEYS))));
            }

            tier.checkInvariants();
            for (KvEvent e : events.drain()) {
                switch (e) {
                    case KvEvent.BlockStored s -> {
                        for (BlockKey key : s.keys()) {
                            assertThat(resident.add(key)).as("stored once: %s", key.w3()).isTrue();
                        }
                        assertThat(s.parent()).isEqualTo(k(s.keys().getFirst().w3() - 1));
                    }
                    case KvEvent.BlockRemoved r -> {
                        for (BlockKey key : r.keys()) {
                            assertThat(resident.remove(key)).as("removed once: %s", key.w3()).isTrue();
                        }
                    }
                    case KvEvent.AllCleared c -> {
                        assertThat(resident).as("cleared a non-empty tier").isNotEmpty();
                        resident.clear();
                    }
                }
            }
            Set<BlockKey> readable = new HashSet<>();
            states(tier).forEach((key, s) -> {
                if (s == EntryState.READY || s == EntryState.LOADING) {
                    readable.add(key);
                }
            });
            assertThat(resident).as("resident set from events, step %d", step).isEqualTo(readable);
            assertThat(tier.freeSlots() + tier.readyCount() + tier.pinnedCount() + tier.storingCount())
                    .isEqualTo(capacity);
        }

        // Drain: every transfer completes; the tier is left with only cached entries.
        stores.forEach(s -> tier.completeStore(s, true));
        loads.forEach(tier::completeLoad);
        tier.checkInvariants();
        assertThat(tier.pinnedCount()).isZero();
        assertThat(tier.storingCount()).isZero();
        assertThat(tier.freeSlots()).isEqualTo(capacity - tier.readableCount());
    }

    private static Map<BlockKey, EntryState> states(TierIndex tier) {
        Map<BlockKey, EntryState> out = new HashMap<>();
        for (int i = -1; i < KEYS; i++) {
            out.put(k(i), tier.state(k(i)));
        }
        return out;
    }
}

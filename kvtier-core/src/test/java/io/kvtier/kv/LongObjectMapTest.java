package io.kvtier.kv;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.management.ManagementFactory;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class LongObjectMapTest {

    /** Random puts, removes and lookups on colliding keys (long probe runs, shifts across the wrap) agree with a HashMap. */
    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3, 42, 1234})
    void behavesAsAHashMap(long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        LongObjectMap<String> map = new LongObjectMap<>();
        Map<Long, String> expected = new HashMap<>();
        for (int op = 0; op < 20_000; op++) {
            long key = rnd.nextBoolean() ? rnd.nextInt(64) : rnd.nextInt(16) * 1024L - 5000;
            switch (rnd.nextInt(4)) {
                case 0, 1 -> {
                    String v = "v" + rnd.nextInt(1000);
                    assertThat(map.put(key, v)).as("seed %d op %d put %d", seed, op, key).isEqualTo(expected.put(key, v));
                }
                case 2 -> assertThat(map.remove(key)).as("seed %d op %d remove %d", seed, op, key).isEqualTo(expected.remove(key));
                default -> {
                    assertThat(map.get(key)).as("seed %d op %d get %d", seed, op, key).isEqualTo(expected.get(key));
                    assertThat(map.containsKey(key)).isEqualTo(expected.containsKey(key));
                }
            }
            assertThat(map.size()).as("seed %d op %d", seed, op).isEqualTo(expected.size());
        }
        Map<Long, String> seen = new HashMap<>();
        map.forEach((k, v) -> assertThat(seen.put(k, v)).as("key %d visited once", k).isNull());
        assertThat(seen).isEqualTo(expected);
        map.clear();
        assertThat(map.size()).isZero();
        assertThat(map.isEmpty()).isTrue();
        assertThat(map.get(3)).isNull();
    }

    @Test
    void nullIsNotAValue() {
        assertThatThrownBy(() -> new LongObjectMap<String>().put(1, null)).isInstanceOf(NullPointerException.class);
    }

    /** Lookups and updates of present keys allocate nothing: ids above the JDK's Long cache are not boxed. */
    @Test
    void lookupsAllocateNothing() {
        var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        LongObjectMap<String> map = new LongObjectMap<>();
        for (long id = 1_000_000; id < 1_000_032; id++) {
            map.put(id, "r" + id);
        }
        String v = "x";
        int hits = 0;
        long before = threads.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < 100_000; i++) {
            long id = 1_000_000 + i % 40;   // 32 present, 8 absent
            hits += map.get(id) != null ? 1 : 0;
            if (map.containsKey(id)) {
                map.put(id, v);
            }
        }
        long used = threads.getCurrentThreadAllocatedBytes() - before;
        assertThat(hits).isEqualTo(80_000);
        // One boxed Long per lookup would be 1.6 MB; the counter reads themselves allocate a little.
        assertThat(used).as("bytes allocated by 100,000 lookups and updates").isLessThan(10_000);
    }
}

package io.kvtier.offload;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class LongIntMapTest {

    /** Random puts, removes and lookups on few keys (long probe runs, shifts across the wrap) agree with a HashMap. */
    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3, 42, 1234})
    void behavesAsAHashMap(long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        LongIntMap map = new LongIntMap();
        Map<Long, Integer> expected = new HashMap<>();
        for (int op = 0; op < 20_000; op++) {
            // Keys from a small range and multiples of the table size collide often.
            long key = rnd.nextBoolean() ? rnd.nextInt(64) : rnd.nextInt(16) * 1024L - 5000;
            switch (rnd.nextInt(4)) {
                case 0, 1 -> {
                    int v = rnd.nextInt();
                    map.put(key, v);
                    expected.put(key, v);
                }
                case 2 -> assertThat(map.remove(key)).as("seed %d op %d remove %d", seed, op, key)
                        .isEqualTo(expected.remove(key) != null);
                default -> assertThat(map.get(key, -1)).as("seed %d op %d get %d", seed, op, key)
                        .isEqualTo(expected.getOrDefault(key, -1));
            }
            assertThat(map.size()).as("seed %d op %d", seed, op).isEqualTo(expected.size());
            if (op % 5_000 == 4_999) {
                for (Map.Entry<Long, Integer> e : expected.entrySet()) {
                    assertThat(map.get(e.getKey(), -1)).as("seed %d key %d", seed, e.getKey()).isEqualTo(e.getValue());
                }
            }
        }
        map.clear();
        assertThat(map.size()).isZero();
        assertThat(map.containsKey(3)).isFalse();
    }
}

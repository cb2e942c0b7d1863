package io.kvtier.offload;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link OffloadStats#sum} must carry every counter: a counter added to the class and forgotten
 * in {@code sum} reads 0 for models with several KV groups (it happened to {@code hitsWaited}).
 * The test sets every field to a distinct value by reflection, so a new field is covered
 * without editing it.
 */
class OffloadStatsSumTest {

    /** trial 10 #7: a hit cut at its first chunk printed {@code {remote=0}} beside {@code {}} elsewhere. */
    @Test
    void aCountTakenBackToZeroLeavesNoEntry() {
        Map<String, Long> m = new java.util.TreeMap<>();
        OffloadStats.add(m, "remote", 32);
        OffloadStats.add(m, "host", 16);
        OffloadStats.add(m, "remote", -32);
        assertThat(m).containsExactly(Map.entry("host", 16L));
        OffloadStats.add(m, "remote", 16);
        OffloadStats.add(m, "remote", -4);
        assertThat(m).containsEntry("remote", 12L).hasSize(2);
    }

    @Test
    void theSumOfOneGroupEqualsThatGroupInEveryField() throws Exception {
        OffloadStats one = filled(1);
        OffloadStats sum = OffloadStats.sum(List.of(one));
        for (Field f : counterFields()) {
            assertThat(comparable(f.get(sum))).as(f.getName()).isEqualTo(comparable(f.get(one)));
        }
    }

    @Test
    void perTierCountsAreAddedOverTheGroups() {
        OffloadStats a = new OffloadStats();
        OffloadStats b = new OffloadStats();
        a.blocksStored.add("host", 16);
        b.blocksStored.add("host", 4);
        b.blocksStored.add("disk", 8);
        a.stores.addJob("host", 1000, 50);
        b.stores.addJob("host", 24, 7);
        OffloadStats sum = OffloadStats.sum(List.of(a, b));
        assertThat(sum.blocksStored()).containsExactly(Map.entry("disk", 8L), Map.entry("host", 20L));
        assertThat(sum.stores()).containsExactly(Map.entry("host", new OffloadStats.Transfers(2, 1024, 57)));
        assertThat(sum.loads()).isEmpty();
    }

    /** A field's value as equals can compare: {@link TierCounts} by its counters. */
    private static Object comparable(Object value) {
        return value instanceof TierCounts c ? c.toString() : value;
    }

    @Test
    void everyLongCounterIsEitherAddedOrTakenFromGroupZero() throws Exception {
        OffloadStats a = filled(1);
        OffloadStats b = filled(1000);
        OffloadStats sum = OffloadStats.sum(List.of(a, b));
        for (Field f : counterFields()) {
            if (f.getType() != long.class) {
                continue;
            }
            long got = f.getLong(sum);
            assertThat(got).as(f.getName()).isIn(f.getLong(a) + f.getLong(b), f.getLong(a));
        }
    }

    private static List<Field> counterFields() {
        return java.util.Arrays.stream(OffloadStats.class.getDeclaredFields())
                .filter(f -> !Modifier.isStatic(f.getModifiers()))
                .peek(f -> f.setAccessible(true))
                .toList();
    }

    /** Every long, double and map field set to values that differ per field and per {@code base}. */
    private static OffloadStats filled(long base) throws Exception {
        OffloadStats s = new OffloadStats();
        long v = base;
        for (Field f : counterFields()) {
            v++;
            if (f.getType() == long.class) {
                f.setLong(s, v);
            } else if (f.getType() == double.class) {
                f.setDouble(s, v + 0.5);
            } else if (f.getType() == TierCounts.class) {
                TierCounts c = (TierCounts) f.get(s);
                c.add("host", v);
                c.add("remote", v * 10);
            } else if (Map.class.isAssignableFrom(f.getType())) {
                Map<String, Object> m = new java.util.TreeMap<>();
                if (f.getName().equals("loadBandwidth")) {
                    m.put("host", v + 0.25);
                    f.set(s, Map.copyOf(m));
                    continue;
                }
                @SuppressWarnings("unchecked")
                Map<String, Object> target = (Map<String, Object>) f.get(s);
                target.put("host", v);
            }
        }
        return s;
    }
}

package io.kvtier.offload;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@link TierCounts}: per-tier counters in fixed slots, read back as maps in name order. */
class TierCountsTest {

    @Test
    void countsAddUpPerTierAndReadBackInNameOrder() {
        TierCounts c = new TierCounts(1);
        c.add("remote", 3);
        c.add("host", 16);
        c.add(new String("host"), 4); // an equal name that is not the literal: the same slot
        c.add("disk", 0);
        assertThat(c.toMap()).containsExactly(Map.entry("host", 20L), Map.entry("remote", 3L));
    }

    @Test
    void aTierNotKnownBeforeGetsItsOwnSlots() {
        TierCounts c = new TierCounts(3);
        c.addJob("host", 1024, 7);
        c.addJob("cxl", 64, 2);
        c.addJob("cxl", 64, 3);
        assertThat(c.toMap(OffloadStats.Transfers::of)).containsExactly(
                Map.entry("cxl", new OffloadStats.Transfers(2, 128, 5)),
                Map.entry("host", new OffloadStats.Transfers(1, 1024, 7)));
        assertThat(c).hasToString("{cxl=[2, 128, 5], host=[1, 1024, 7]}");
    }

    @Test
    void addAllAddsEveryTierOfTheOther() {
        TierCounts a = new TierCounts(1);
        TierCounts b = new TierCounts(1);
        a.add("host", 2);
        b.add("host", 5);
        b.add("cxl", 1);
        a.addAll(b);
        assertThat(a.toMap()).containsExactly(Map.entry("cxl", 1L), Map.entry("host", 7L));
        assertThat(b.toMap()).containsExactly(Map.entry("cxl", 1L), Map.entry("host", 5L));
    }
}

package io.kvtier.text;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CountsTest {

    @Test
    void showsTheNonZeroCountsInOrderWithSeparators() {
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("host", 1024L);
        m.put("disk", 0L);
        m.put("remote", 3L);
        assertThat(Counts.nonZero(m)).isEqualTo("host 1,024, remote 3");
    }

    /** Was: {@code loaded {host=0}} beside {@code external hits {}} in generate's summary. */
    @Test
    void zerosAndNothingReadNone() {
        assertThat(Counts.nonZero(Map.of("host", 0L))).isEqualTo("none");
        assertThat(Counts.nonZero(Map.of())).isEqualTo("none");
    }
}

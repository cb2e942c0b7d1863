package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class StatsFilesTest {

    private static Map<String, Object> record(Object reason, double ratio) {
        Map<String, Object> remote = new LinkedHashMap<>();
        remote.put("off_reason", reason);
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("requests", 2);
        r.put("ratio", ratio);
        r.put("remote", remote);
        return r;
    }

    /**
     * One record and a sweep's list print alike, {@code "key": value} (was: Jackson's default
     * printer, {@code "key" : value} and {@code [ {}, in every stats file).
     */
    @Test
    void aRecordAndAListOfRecordsPrintKeysAndValuesAlike() throws java.io.IOException {
        assertThat(StatsFiles.json(record("x", 0.5))).isEqualTo("""
                {
                  "requests": 2,
                  "ratio": 0.5,
                  "remote": {
                    "off_reason": "x"
                  }
                }""");
        assertThat(StatsFiles.json(List.of(Map.of("a", 1), Map.of("a", 2)))).isEqualTo("""
                [
                  {
                    "a": 1
                  },
                  {
                    "a": 2
                  }
                ]""");
    }

    /** Was: a null or NaN leaf dropped its column, so a run whose tier stayed on had one column fewer. */
    @Test
    void aFieldWithoutAValueKeepsItsColumnAsAnEmptyCell() {
        assertThat(StatsFiles.csv(List.of(record(null, Double.NaN))))
                .isEqualTo("requests,ratio,remote.off_reason\n2,,\n");
        assertThat(StatsFiles.csv(List.of(record("auth failed", 0.5))))
                .isEqualTo("requests,ratio,remote.off_reason\n2,0.500000,auth failed\n");
    }
}

package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.kvtier.tier.remote.RedisServers;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code bench offload --remote-url}'s throughput table against a real Redis, and the parsing of
 * redis-benchmark's figures (a run too short to time prints {@code inf}, never a figure here).
 */
class RemoteBandwidthTest {

    @Test
    void redisBenchmarksCsvFigureIsParsedAndInfIsNoFigure() {
        String csv = "\"test\",\"rps\",\"avg_latency_ms\"\n\"SET\",\"13212.90\",\"0.564\"\n";
        assertThat(RemoteBandwidth.requestsPerSecond(csv, "set")).isEqualTo(13212.90);
        assertThat(RemoteBandwidth.requestsPerSecond(csv, "get")).isNaN();
        assertThat(RemoteBandwidth.requestsPerSecond("\"GET\",\"inf\",\"0.000\"\n", "get")).isNaN();
        assertThat(RemoteBandwidth.requestsPerSecond("", "get")).isNaN();
    }

    /** Four rows, every figure a finite positive MB/s, each ratio the tier's figure over redis-benchmark's. */
    @Test
    void theTableHasEverySizeWithFiguresAndTheirRatios() {
        CliRun r = CliRun.of("bench", "offload", "--remote-url", RedisServers.standalone(), "--skip-bandwidth", "--skip-ttft",
                "--skip-decode", "--remote-mib-per-size", "1", "--repeats", "1");
        assertThat(r.code()).as(r.err()).isZero();
        List<String> lines = r.out().lines().toList();
        assertThat(lines.getFirst()).startsWith("== remote tier throughput against redis://").endsWith("median of 1 rounds ==");
        List<String> rows = lines.stream().filter(l -> l.strip().matches("\\d+ KiB .*")).toList();
        assertThat(rows).extracting(l -> l.strip().split("\\s+")[0]).containsExactly("64", "256", "1024", "4096");
        for (String row : rows) {
            double[] f = Arrays.stream(row.strip().split("\\s+")).skip(2).mapToDouble(Double::parseDouble).toArray();
            assertThat(f).as(row).hasSize(6);
            assertThat(Arrays.stream(f).allMatch(x -> Double.isFinite(x) && x > 0)).as("finite positive figures: " + row).isTrue();
            // Printed MB/s are rounded to 1, ratios to 0.01: the ratio of the printed figures is within both.
            assertThat(f[4]).as("store/SET of " + row).isCloseTo(f[0] / f[1], within(0.006 + 0.5 / f[1] * 1.01 + 0.5 * f[0] / (f[1] * f[1])));
            assertThat(f[5]).as("load/GET of " + row).isCloseTo(f[2] / f[3], within(0.006 + 0.5 / f[3] * 1.01 + 0.5 * f[2] / (f[3] * f[3])));
        }
        assertThat(r.out()).doesNotContain("decode with offloading").doesNotContain("time to first token");
    }

    @Test
    void theModelFlagIsRefusedWhenTheDecodeFiguresAreSkipped() {
        CliRun r = CliRun.of("bench", "offload", "--skip-decode", "--skip-bandwidth", "--skip-ttft", "--model", "x.bin");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).isEqualTo("kvtier: --model has no effect with --skip-decode: the decode figures are skipped\n");
    }
}

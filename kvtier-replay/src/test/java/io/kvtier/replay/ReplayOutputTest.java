package io.kvtier.replay;

import static io.kvtier.replay.ReplayTraces.req;
import static io.kvtier.replay.ReplayTraces.trace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvtier.replay.trace.Trace;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Capacities, the table, JSON, CSV, the sweep and its chart. */
class ReplayOutputTest {

    @TempDir
    Path dir;

    private static final Trace HAND = trace(req(1300, 0, 1, 2), req(1300, 0, 1, 3), req(2048, 4, 5, 6, 7),
            req(1537, 0, 1, 2, 3));

    @Test
    void capacitiesParseWithDecimalAndBinarySuffixes() {
        assertThat(Capacity.parse("3M", "--host-cache-tokens")).isEqualTo(Capacity.tokens(3_000_000));
        assertThat(Capacity.parse("448k", "--host-cache-tokens")).isEqualTo(Capacity.tokens(448_000));
        assertThat(Capacity.parse("1Mi", "--host-cache-tokens")).isEqualTo(Capacity.tokens(1_048_576));
        assertThat(Capacity.parse("1.5M", "--host-cache-tokens")).isEqualTo(Capacity.tokens(1_500_000));
        assertThat(Capacity.parse("10_000", "--host-cache-tokens")).isEqualTo(Capacity.tokens(10_000));
        assertThat(Capacity.parse("inf", "--host-cache-tokens")).isEqualTo(Capacity.INF);
        assertThat(Capacity.parse("min", "--device-tokens")).isEqualTo(Capacity.MIN);
        assertThatThrownBy(() -> Capacity.parse("lots", "--host-cache-tokens")).hasMessageContaining("--host-cache-tokens: 'lots'");
        assertThat(Capacity.format(3_000_000)).isEqualTo("3M");
        assertThat(Capacity.format(2_500_000)).isEqualTo("2.5M");
        assertThat(Capacity.format(250_000)).isEqualTo("250k");
    }

    @Test
    void badSettingsAreRefusedWithTheFlagNamed() {
        ReplayConfig d = ReplayConfig.defaults(ReplayConfig.Mode.INSTANT);
        assertThatThrownBy(() -> d.withHost(Capacity.MIN)).hasMessageContaining("--host-cache-tokens");
        assertThatThrownBy(() -> new ReplayConfig(d.mode(), d.policy(), d.device(), Capacity.tokens(0), Capacity.tokens(1000),
                512, 1, d.cost(), 0, 256, 1)).hasMessageContaining("--disk-cache-tokens").hasMessageContaining("--host-cache-tokens");
        assertThatThrownBy(() -> new ReplayConfig(d.mode(), d.policy(), d.device(), d.host(), Capacity.MIN,
                512, 1, d.cost(), 0, 256, 1)).hasMessageContaining("--disk-cache-tokens");
        assertThatThrownBy(() -> Replay.run(HAND, d.withDevice(Capacity.tokens(1024)), Progress.none()))
                .hasMessageContaining("--device-tokens").hasMessageContaining("needs 4");
        assertThatThrownBy(() -> Policy.parse("fifo")).hasMessageContaining("lru, arc, lru-admit2, lhd or duel");
    }

    @Test
    void tableJsonAndCsvCarryTheNumbers() throws IOException {
        ReplayResult r = Replay.run(HAND, ReplayTraces.instant(Capacity.INF, Policy.LRU), Progress.none());
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        ReplayReport.printTable(new PrintStream(bytes, true, StandardCharsets.UTF_8), r);
        String table = bytes.toString(StandardCharsets.UTF_8);
        assertThat(table).contains("4 requests", "device", "host", "optimum (Belady", "ceiling (unbounded cache)");

        JsonNode j = new ObjectMapper().valueToTree(ReplayReport.toJson(r));
        assertThat(j.get("requests").asInt()).isEqualTo(4);
        assertThat(j.get("prompt_tokens").asLong()).isEqualTo(1300 + 1300 + 2048 + 1537);
        assertThat(j.get("hit_tokens").asLong()).isEqualTo(r.hitTokens());
        assertThat(j.get("token_hit_ratio").asDouble()).isEqualTo(r.tokenHitRatio());
        assertThat(j.get("hit_tokens_by_tier").get("device").asLong()).isEqualTo(r.deviceHitTokens());
        assertThat(j.get("hit_tokens_by_tier").get("host").asLong()).isEqualTo(r.hostHitTokens());
        assertThat(j.get("chunks_written_by_tier").get("host").asLong()).isEqualTo(r.hostChunksWritten());
        assertThat(j.get("optimum_token_hit_ratio").asDouble()).isEqualTo(r.optimumTokenHitRatio());
        assertThat(j.get("ceiling_token_hit_ratio").asDouble()).isEqualTo(r.ceilingTokenHitRatio());

    }

    @Test
    void timedJsonHasLatencies() throws IOException {
        ReplayResult r = Replay.run(HAND, ReplayConfig.defaults(ReplayConfig.Mode.TIMED), Progress.none());
        JsonNode j = new ObjectMapper().valueToTree(ReplayReport.toJson(r));
        assertThat(j.get("ttft_s").get("p99").asDouble()).isPositive();
        assertThat(j.has("optimum_token_hit_ratio")).isFalse();
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        ReplayReport.printTable(new PrintStream(bytes, true, StandardCharsets.UTF_8), r);
        assertThat(bytes.toString(StandardCharsets.UTF_8)).contains("TTFT", "end-to-end", "makespan");
    }

    @Test
    void sweepRunsEveryPolicyAtEveryCapacityAndDrawsTheChart() throws IOException {
        Trace t = ReplayTraces.random(21, 200, 8);
        List<Long> caps = List.of(1024L, 4096L, 16_384L);
        List<ReplayResult> results = Sweep.run(t, ReplayConfig.defaults(ReplayConfig.Mode.INSTANT),
                Sweep.DEFAULT_POLICIES, caps, 2, Progress.none());
        assertThat(results).hasSize(15);
        assertThat(results).extracting(r -> r.config().policy()).containsExactly(Policy.LRU, Policy.LRU, Policy.LRU,
                Policy.ARC, Policy.ARC, Policy.ARC, Policy.LRU_ADMIT2, Policy.LRU_ADMIT2, Policy.LRU_ADMIT2,
                Policy.LHD, Policy.LHD, Policy.LHD, Policy.DUEL, Policy.DUEL, Policy.DUEL);
        for (ReplayResult r : results) {
            assertThat(r.hitTokens()).isLessThanOrEqualTo(r.optimum().beladyHitTokens());
            // each replay equals a lone replay with the same settings (parallel runs share nothing)
            assertThat(r.hitTokensByRequest()).containsExactly(Replay.run(t, r.config(), Progress.none()).hitTokensByRequest());
        }
        Path png = dir.resolve("sweep.png");
        Sweep.writeChart(png, results);
        byte[] head = Files.readAllBytes(png);
        assertThat(head.length).isGreaterThan(1000);
        assertThat(new String(head, 1, 3, StandardCharsets.US_ASCII)).isEqualTo("PNG");
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        Sweep.printTable(new PrintStream(bytes, true, StandardCharsets.UTF_8), results);
        assertThat(bytes.toString(StandardCharsets.UTF_8)).contains("lru-admit2", "lhd", "duel", "optimum", "ceiling");
    }

    @Test
    void aSweepWithADiskTierNamesItInTheTableAndTheChartAxis() {
        ReplayConfig cfg = ReplayTraces.instant(Capacity.tokens(1024), Policy.LRU);
        ReplayResult hostOnly = Sweep.run(HAND, cfg, List.of(Policy.LRU), List.of(1024L), 1, Progress.none()).getFirst();
        List<ReplayResult> disk = Sweep.run(HAND, cfg.withDisk(Capacity.tokens(4096)), List.of(Policy.LRU), List.of(1024L), 1,
                Progress.none());
        // device 'min': the largest request's 4 blocks of 512 tokens
        assertThat(Sweep.fixedTiers(hostOnly)).isEqualTo("device tier 2,048 tokens");
        assertThat(Sweep.fixedTiers(disk.getFirst())).isEqualTo("device tier 2,048 tokens; disk tier 4,096 tokens");
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        Sweep.printTable(new PrintStream(bytes, true, StandardCharsets.UTF_8), disk);
        assertThat(bytes.toString(StandardCharsets.UTF_8).lines().findFirst().orElseThrow())
                .contains("4 requests, 6,185 prompt tokens; device tier 2,048 tokens; disk tier 4,096 tokens; token hit ratio");
    }

    @Test
    void schedulerBenchReportsAPositiveCostPerStep() {
        SchedulerBench.Result r = SchedulerBench.run(16, 64, 50, 16, ReplayConfig.TIMED_MAX_BATCH_TOKENS, 1);
        assertThat(r.nanosPerStep()).isPositive();
        assertThat(r.tokensPerStep()).isEqualTo(16.0);
    }

    @Test
    void aPartlyReplayedTraceSaysSoInTheTableTheSweepAndTheChart() {
        ReplayConfig cfg = ReplayTraces.instant(Capacity.INF, Policy.LRU);
        var part = HAND.firstRequests(2);
        ReplayResult r = Replay.run(part, cfg, Progress.none());
        assertThat(r.partial()).isTrue();
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        ReplayReport.printTable(new PrintStream(bytes, true, StandardCharsets.UTF_8), r);
        assertThat(bytes.toString(StandardCharsets.UTF_8)).contains("(first 2 of 4 requests)");
        List<ReplayResult> sweep = Sweep.run(part, cfg, List.of(Policy.LRU), List.of(1024L), 1, Progress.none());
        assertThat(Sweep.chartTitle(sweep)).contains("(first 2 of 4 requests)");
        assertThat(Sweep.chartTitle(List.of(Replay.run(HAND, cfg, Progress.none())))).doesNotContain("first");
    }
}

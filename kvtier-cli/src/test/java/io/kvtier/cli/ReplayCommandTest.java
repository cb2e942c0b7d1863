package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code ./kvtier replay} and {@code ./kvtier bench scheduler} from the command line. */
class ReplayCommandTest {

    @TempDir
    Path dir;

    private Path trace() throws IOException {
        Path t = dir.resolve("hand.jsonl");
        Files.writeString(t, """
                {"timestamp": 0, "input_length": 1300, "output_length": 5, "hash_ids": [0, 1, 2]}
                {"timestamp": 100, "input_length": 1300, "output_length": 5, "hash_ids": [0, 1, 3]}
                {"timestamp": 200, "input_length": 1024, "output_length": 2, "hash_ids": [0, 1]}
                """);
        return t;
    }

    /** Runs the CLI; returns {exit code, stdout, stderr}. */
    private static Object[] cli(String... args) {
        CliRun r = CliRun.of(args);
        return new Object[] {r.code(), r.out(), r.err()};
    }

    @Test
    void instantReplayPrintsTheTableAndWritesJsonAndCsv() throws IOException {
        Path json = dir.resolve("r.json");
        Path csv = dir.resolve("r.csv");
        Object[] r = cli("replay", "--trace", trace().toString(), "--stats-json", json.toString(), "--stats-csv", csv.toString());
        assertThat(r[0]).as("stderr: %s", r[2]).isEqualTo(0);
        assertThat((String) r[1]).contains("3 requests", "optimum (Belady", "ceiling", "policy duel"); // the default (issue 13 item 5)
        JsonNode j = new ObjectMapper().readTree(json.toFile());
        assertThat(j.get("eviction").asText()).isEqualTo("duel");
        assertThat(j.get("hit_tokens").asLong()).isEqualTo(1024 + 512);
        assertThat(j.get("prompt_tokens").asLong()).isEqualTo(1300 + 1300 + 1024);
        assertThat(j.get("optimum_token_hit_ratio").asDouble()).isEqualTo(j.get("token_hit_ratio").asDouble());
        assertThat(Files.readAllLines(csv)).hasSize(2);
    }

    @Test
    void fromRequestReplaysTheRestOfTheTraceAndRefusesAnIndexOutside() throws IOException {
        Path json = dir.resolve("w.json");
        Object[] r = cli("replay", "--trace", trace().toString(), "--from-request", "1", "--eviction", "lhd",
                "--stats-json", json.toString());
        assertThat(r[0]).as("stderr: %s", r[2]).isEqualTo(0);
        assertThat((String) r[1]).contains("hand.jsonl from request 1", "2 requests", "policy lhd");
        JsonNode j = new ObjectMapper().readTree(json.toFile());
        // Request [0,1,3] starts cold; [0,1] then hits its first block (the last token is always computed).
        assertThat(j.get("hit_tokens").asLong()).isEqualTo(512);
        assertThat(j.get("prompt_tokens").asLong()).isEqualTo(1300 + 1024);

        Object[] bad = cli("replay", "--trace", trace().toString(), "--from-request", "3");
        assertThat(bad[0]).isEqualTo(2);
        assertThat((String) bad[2]).contains("--from-request must be in 0..2 (the trace has 3 requests), got 3");
    }

    @Test
    void kvGroupsCompareThePerGroupRulesWithEveryLayerInTheTableAndTheJson() throws IOException {
        Path json = dir.resolve("g.json");
        Object[] r = cli("replay", "--trace", trace().toString(), "--kv-groups", "gemma3-27b", "--stats-json", json.toString());
        assertThat(r[0]).as("stderr: %s", r[2]).isEqualTo(0);
        assertThat((String) r[1]).contains("KV traffic by group, gemma3-27b: 62 layers, group 0 full x 10 layers; group 1 window 1024 x 52 layers",
                "per-group rules", "group 1 window 1024, 52 layers", "every block of every layer", "per-group / every layer",
                "KV 507,904 B/token");
        JsonNode k = new ObjectMapper().readTree(json.toFile()).get("kv_traffic");
        // The first prompt (1300 tokens) fills blocks 0 and 1; its next query reads from position
        // 1300 - 1023 = 277, block 0: both groups store both blocks. The others hit them on the
        // device and store nothing new. Prompts this short save nothing: same bytes as every layer.
        JsonNode g = k.get("per_group");
        assertThat(g.get("group_0").get("blocks_stored").asLong()).isEqualTo(2);
        assertThat(g.get("group_0").get("bytes_per_block").asLong()).isEqualTo(512L * 10 * 8192);
        assertThat(g.get("group_1").get("bytes_per_block").asLong()).isEqualTo(512L * 52 * 8192);
        assertThat(g.get("group_1").get("blocks_stored").asLong()).isEqualTo(2);
        assertThat(k.get("every_layer").get("bytes_stored").asLong()).isEqualTo(2 * 512L * 62 * 8192);
        assertThat(g.get("bytes_stored").asLong()).isEqualTo(k.get("every_layer").get("bytes_stored").asLong());

        Object[] bad = cli("replay", "--trace", trace().toString(), "--kv-groups", "gemma4");
        assertThat(bad[0]).isEqualTo(2);
        assertThat((String) bad[2]).contains("--kv-groups: 'gemma4' is not a known layout (gemma3-27b, gemma3-27b-all-full)");
        Object[] both = cli("replay", "--trace", trace().toString(), "--kv-groups", "gemma3-27b", "--kv-bytes-per-token", "1k");
        assertThat(both[0]).isEqualTo(2);
        assertThat((String) both[2]).contains("drop --kv-bytes-per-token");
        Object[] disk = cli("replay", "--trace", trace().toString(), "--kv-groups", "gemma3-27b", "--disk-cache-tokens", "1M");
        assertThat(disk[0]).isEqualTo(2);
        assertThat((String) disk[2]).contains("the replay's hybrid cost model has the host tier only");
        // the all-full layout alone too: its KV-traffic table counts the host tier only (a new user's trial)
        for (String tier : new String[] {"--disk-cache-tokens", "--remote-cache-tokens"}) {
            Object[] allFull = cli("replay", "--trace", trace().toString(), "--kv-groups", "gemma3-27b-all-full", tier, "1M");
            assertThat(allFull[0]).as(tier).isEqualTo(2);
            assertThat((String) allFull[2]).as(tier).contains("--kv-groups gemma3-27b-all-full: the replay's hybrid cost model has the host tier only");
        }
    }

    @Test
    void timedReplayReportsLatencies() throws IOException {
        Object[] r = cli("replay", "--trace", trace().toString(), "--mode", "timed", "--speedup", "2", "--eviction", "arc");
        assertThat(r[0]).as("stderr: %s", r[2]).isEqualTo(0);
        assertThat((String) r[1]).contains("TTFT", "end-to-end", "speedup 2)", "policy arc");
    }

    @Test
    void everyFigureOfTheTextReportHasUnitsAndSeparatorsNotRawDoubles() throws IOException {
        Object[] r = cli("replay", "--trace", trace().toString(), "--mode", "timed", "--speedup", "0.0001", "--load-policy", "faster",
                "--store-policy", "lazy", "--remote-cache-tokens", "10k", "--device-tokens", "min");
        assertThat(r[0]).as("stderr: %s", r[2]).isEqualTo(0);
        String text = ((String) r[1]).replace(dir.toString(), "DIR");
        // Was: "load bandwidth {host=4.990262400124379E10} B/s", "speedup 1.0E-4", "NaN per chunk hit".
        assertThat(text).doesNotContainPattern("\\d[eE][+-]?\\d").doesNotContainPattern("\\d{5,}")
                .doesNotContainPattern("\\d\\.\\d{5,}").doesNotContain("{").doesNotContain("NaN");
        assertThat(text).containsPattern("load bandwidth (not measured|host [\\d,]+\\.\\d\\d GB/s)")
                .containsPattern("prefill (not measured|[\\d,]+ tokens/s)").contains("speedup 0.0001)")
                .containsPattern("blocks not stored by reason: (none|[a-z-]+ [\\d,]+)")
                .containsPattern("through the host; (no chunk hit|[\\d,]+\\.\\d\\d per chunk hit)");
    }

    @Test
    void sweepWritesTheChart() throws IOException {
        Path png = dir.resolve("s.png");
        Object[] r = cli("replay", "--trace", trace().toString(), "--sweep", "--sweep-host-cache-tokens", "512,1024,2048",
                "--png", png.toString());
        assertThat(r[0]).as("stderr: %s", r[2]).isEqualTo(0);
        assertThat((String) r[1]).contains("lru-admit2", "optimum");
        assertThat(Files.size(png)).isGreaterThan(1000);
    }

    @Test
    void userMistakesAreOneLineAndExitCode2() throws IOException {
        Object[] disk = cli("replay", "--trace", trace().toString(), "--disk-cache-tokens", "min");
        assertThat(disk[0]).isEqualTo(2);
        assertThat((String) disk[2]).contains("--disk-cache-tokens").doesNotContain("Exception");
        Object[] missing = cli("replay", "--trace", dir.resolve("nope.jsonl").toString());
        assertThat(missing[0]).isEqualTo(2);
        assertThat((String) missing[2]).contains("no such file");
        Path bad = dir.resolve("bad.jsonl");
        Files.writeString(bad, "{\"timestamp\": 0, \"input_length\": 1300, \"output_length\": 5, \"hash_ids\": [0]}\n");
        Object[] badLine = cli("replay", "--trace", bad.toString());
        assertThat(badLine[0]).isEqualTo(2);
        assertThat((String) badLine[2]).contains("bad.jsonl:1: field 'hash_ids'");
        Object[] capacity = cli("replay", "--trace", trace().toString(), "--host-cache-tokens", "lots");
        assertThat(capacity[0]).isEqualTo(2);
        assertThat((String) capacity[2]).contains("--host-cache-tokens: 'lots'");
    }

    @Test
    void benchSchedulerPrintsTheCostPerStep() {
        Object[] r = cli("bench", "scheduler", "--max-running", "8", "--prompt-tokens", "32", "--steps", "20", "--repeats", "1");
        assertThat(r[0]).as("stderr: %s", r[2]).isEqualTo(0);
        assertThat((String) r[1]).contains("engine time per step outside the forward pass");
    }

    @Test
    void aDiskTierBehindTheHostTierServesWhatTheHostEvicted() throws IOException {
        // A stores blocks 0,1; B's two blocks evict them from the 2-chunk host tier; C's prefix 0,1
        // comes back from disk (written through from the host), promoted and loaded.
        Path t = dir.resolve("disk.jsonl");
        Files.writeString(t, """
                {"timestamp": 0, "input_length": 1300, "output_length": 5, "hash_ids": [0, 1, 2]}
                {"timestamp": 100, "input_length": 1024, "output_length": 5, "hash_ids": [5, 6]}
                {"timestamp": 200, "input_length": 1300, "output_length": 2, "hash_ids": [0, 1, 3]}
                """);
        Path json = dir.resolve("disk.json");
        Object[] r = cli("replay", "--trace", t.toString(), "--host-cache-tokens", "1024", "--disk-cache-tokens", "5120",
                "--stats-json", json.toString());
        assertThat(r[0]).as("stderr: %s", r[2]).isEqualTo(0);
        JsonNode j = new ObjectMapper().readTree(json.toFile());
        assertThat(j.get("hit_tokens_by_tier").get("disk").asLong()).isEqualTo(1024);
        assertThat(j.get("hit_tokens_by_tier").get("host").asLong()).isZero();
        assertThat(j.get("chunks_written_by_tier").get("disk").asLong()).isEqualTo(4);
        assertThat(j.get("hit_tokens").asLong()).isEqualTo(1024);
        assertThat(j.get("optimum_token_hit_ratio").asDouble()).isEqualTo(j.get("token_hit_ratio").asDouble());
        Object[] noHost = cli("replay", "--trace", t.toString(), "--host-cache-tokens", "0", "--disk-cache-tokens", "5120");
        assertThat(noHost[0]).isEqualTo(2);
        assertThat((String) noHost[2]).contains("--disk-cache-tokens").contains("--host-cache-tokens");
    }
}

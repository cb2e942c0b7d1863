package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvtier.engine.ReferenceRecords;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every output format of a command carries the same fields, and per-request figures add up to the summary. */
class ReportFieldsTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private Path diskTrace() throws IOException {
        return TraceFiles.write(dir, TraceFiles.request(0, 1300, 5, 0, 1, 2), TraceFiles.request(100, 1024, 5, 5, 6),
                TraceFiles.request(200, 1300, 2, 0, 1, 3));
    }

    /** The CSV's header is the JSON record's fields, nested ones joined with dots (a null one too: an empty cell). */
    private static List<String> jsonFields(JsonNode record) {
        List<String> out = new ArrayList<>();
        collect("", record, out);
        return out;
    }

    private static void collect(String prefix, JsonNode n, List<String> out) {
        for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (e.getValue().isObject()) {
                collect(prefix + e.getKey() + ".", e.getValue(), out);
            } else {
                out.add(prefix + e.getKey());
            }
        }
    }

    @Test
    void replayCsvAndJsonCarryTheSameFieldsDiskTierIncluded() throws IOException {
        Path json = dir.resolve("r.json");
        Path csv = dir.resolve("r.csv");
        CliRun r = CliRun.of("replay", "--trace", diskTrace().toString(), "--host-cache-tokens", "1024",
                "--disk-cache-tokens", "5120", "--stats-json", json.toString(), "--stats-csv", csv.toString());
        assertThat(r.code()).as(r.err()).isZero();
        JsonNode j = JSON.readTree(json.toFile());
        List<String> header = List.of(Files.readAllLines(csv).getFirst().split(","));
        assertThat(header).containsExactlyElementsOf(jsonFields(j));
        assertThat(header).contains("hit_tokens_by_tier.disk", "chunks_written_by_tier.disk", "disk_tokens", "disk_capacity");
        assertThat(j.get("disk_tokens").asLong()).isEqualTo(5120);
        assertThat(j.get("disk_capacity").asText()).isEqualTo("5120");
        String row = Files.readAllLines(csv).get(1);
        assertThat(row.split(",", -1)).hasSize(header.size());
        assertThat(row.split(",", -1)[header.indexOf("hit_tokens_by_tier.disk")]).isEqualTo("1024");
        // The text table carries the disk tier too.
        assertThat(r.out()).contains("disk", "5,120");
    }

    @Test
    void timedAndSweepCsvMatchTheirJson() throws IOException {
        Path json = dir.resolve("t.json");
        Path csv = dir.resolve("t.csv");
        CliRun timed = CliRun.of("replay", "--trace", diskTrace().toString(), "--mode", "timed", "--stats-json",
                json.toString(), "--stats-csv", csv.toString());
        assertThat(timed.code()).as(timed.err()).isZero();
        assertThat(List.of(Files.readAllLines(csv).getFirst().split(","))).containsExactlyElementsOf(
                jsonFields(JSON.readTree(json.toFile()))).contains("ttft_s.p99", "e2e_s.p50");
        CliRun sweep = CliRun.of("replay", "--trace", diskTrace().toString(), "--sweep", "--sweep-host-cache-tokens",
                "512,1024", "--png", dir.resolve("s.png").toString(), "--stats-json", json.toString(), "--stats-csv",
                csv.toString());
        assertThat(sweep.code()).as(sweep.err()).isZero();
        JsonNode all = JSON.readTree(json.toFile());
        assertThat(all.size()).isEqualTo(10); // 5 policies x 2 capacities
        assertThat(Files.readAllLines(csv)).hasSize(11);
        assertThat(List.of(Files.readAllLines(csv).getFirst().split(","))).containsExactlyElementsOf(jsonFields(all.get(0)));
    }

    /** The reference prompts, one a line. */
    private Path allPrompts() throws IOException {
        Path prompts = dir.resolve("all.txt");
        List<String> lines = new ArrayList<>();
        ReferenceRecords.load().forEach(rec -> lines.add(rec.prompt()));
        return Files.write(prompts, lines);
    }

    /** {@code generate} of {@code prompts} on a device pool of 24 blocks of 16 (the reference prompts preempt), host tier on. */
    private static CliRun generateOnASmallPool(Path prompts, String... statsFlags) {
        List<String> args = new ArrayList<>(List.of("generate", "--model", ReferenceRecords.model().toString(), "--tokenizer",
                ReferenceRecords.tokenizer().toString(), "--prompts", prompts.toString(), "--max-tokens", "64", "--output",
                "jsonl", "--block-size", "16", "--device-blocks", "24"));
        args.addAll(List.of(statsFlags));
        return CliRun.of(args.toArray(String[]::new));
    }

    @Test
    void generateCsvAndJsonCarryTheSameFieldsAndRequestHitsSumToTheSummary() throws IOException {
        // A small device pool preempts; preempted requests reload their own blocks from the host tier:
        // loads, but no hits (the first admission's hits only, as a server's cached_tokens).
        Path json = dir.resolve("g.json");
        Path csv = dir.resolve("g.csv");
        CliRun r = generateOnASmallPool(allPrompts(), "--stats-json", json.toString(), "--stats-csv", csv.toString());
        assertThat(r.code()).as(r.err()).isZero();
        JsonNode s = JSON.readTree(json.toFile());
        assertThat(List.of(Files.readAllLines(csv).getFirst().split(","))).containsExactlyElementsOf(jsonFields(s));
        assertThat(s.get("preemptions").asInt()).as("the scenario must preempt").isPositive();
        long summary = 0;
        for (Iterator<JsonNode> it = s.get("external_hit_tokens").elements(); it.hasNext(); ) {
            summary += it.next().asLong();
        }
        long perRequest = 0;
        for (String line : r.out().lines().toList()) {
            JsonNode o = JSON.readTree(line);
            long hits = o.get("device_hit_tokens").asLong();
            for (Iterator<JsonNode> it = o.get("external_hit_tokens").elements(); it.hasNext(); ) {
                long n = it.next().asLong();
                perRequest += n;
                hits += n;
            }
            assertThat(hits).as("a request's hits are within its prompt: " + line).isLessThanOrEqualTo(o.get("prompt_ids").size());
        }
        assertThat(s.get("blocks_loaded").get("host").asLong()).as("preempted requests reload for this test to mean anything")
                .isPositive();
        assertThat(perRequest).isEqualTo(summary);
        assertThat(summary + s.get("device_hit_tokens").asLong()).isLessThanOrEqualTo(s.get("prompt_tokens").asLong());
    }

    /**
     * Two runs of one configuration, one that loads and hits and one that does nothing of the kind,
     * write the same CSV header (was: an empty per-tier map wrote no column, so the idle run lacked
     * {@code blocks_loaded.host}, {@code external_hit_tokens.host}, {@code blocks_not_stored.*}).
     */
    @Test
    void generateRunsOfOneConfigurationShareACsvHeader() throws IOException {
        Path one = dir.resolve("one.txt");
        Files.writeString(one, "a\n");
        List<List<String>> csvs = new ArrayList<>();
        for (Path p : List.of(one, allPrompts())) {
            Path csv = dir.resolve(p.getFileName() + ".csv");
            CliRun r = generateOnASmallPool(p, "--stats-csv", csv.toString());
            assertThat(r.code()).as(r.err()).isZero();
            csvs.add(Files.readAllLines(csv));
        }
        List<String> idle = List.of(csvs.get(0).get(0).split(","));
        List<String> busy = List.of(csvs.get(1).get(0).split(","));
        assertThat(idle).containsExactlyElementsOf(busy).contains("external_hit_tokens.host", "blocks_stored.host",
                "blocks_loaded.host", "blocks_not_stored.not-admitted", "blocks_not_stored.disk-write-failed");
        String[] idleRow = csvs.get(0).get(1).split(",", -1);
        String[] busyRow = csvs.get(1).get(1).split(",", -1);
        assertThat(idleRow[idle.indexOf("blocks_loaded.host")]).isEqualTo("0");
        assertThat(idleRow[idle.indexOf("external_hit_tokens.host")]).isEqualTo("0");
        assertThat(Long.parseLong(busyRow[busy.indexOf("blocks_loaded.host")])).as("the busy run reloads").isPositive();
    }

    @Test
    void aLoneIdleRequestGetsNoQueueingNote() throws IOException {
        Path one = TraceFiles.write(dir, TraceFiles.request(0, 4000, 50, 0, 1, 2, 3, 4, 5, 6, 7));
        CliRun r = CliRun.of("replay", "--trace", one.toString(), "--mode", "timed");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).contains("GPU busy").doesNotContain("note:");
    }
}

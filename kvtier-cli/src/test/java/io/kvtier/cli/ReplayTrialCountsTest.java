package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.engine.ReferenceRecords;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A new user's trial (trial 25, second part): counts of one, ratios of no hit, and a lone request's percentiles. */
class ReplayTrialCountsTest {

    @TempDir
    Path dir;

    /** Two requests of 10 tokens: one block each, no full block, so nothing can hit. */
    private Path shortRequests() throws IOException {
        return TraceFiles.write(dir, TraceFiles.request(0, 10, 1, 0), TraceFiles.request(1_000, 10, 1, 1));
    }

    private CliRun replay(String... args) throws IOException {
        List<String> all = new java.util.ArrayList<>(List.of("replay", "--trace", shortRequests().toString()));
        all.addAll(List.of(args));
        CliRun r = CliRun.of(all.toArray(String[]::new));
        assertThat(r.code()).as(r.err()).isZero();
        return r;
    }

    /** "(1 chunks)" for host, disk and remote, "(1 blocks)" for the device: one of each is singular. */
    @Test
    void aCapacityOfOneIsSingular() throws IOException {
        CliRun r = replay("--device-tokens", "512", "--host-cache-tokens", "512", "--disk-cache-tokens", "512",
                "--remote-cache-tokens", "512");
        assertThat(r.out()).contains("(1 block)").contains("(1 chunk)").doesNotContain("1 blocks").doesNotContain("1 chunks");
        assertThat(r.out().lines().filter(l -> l.contains("(1 chunk)")).count()).as(r.out()).isEqualTo(3);
        CliRun groups = replay("--kv-groups", "gemma3-27b", "--host-cache-tokens", "512");
        assertThat(groups.out()).contains("(each holds 1 block)").doesNotContain("1 blocks");
    }

    /** The ratio row of --kv-groups on a trace with no hit: 0 / 0 printed NaN, now "n/a" as the ceiling line says. */
    @Test
    void theGroupsRatioRowWithoutHitsSaysNa() throws IOException {
        CliRun r = replay("--kv-groups", "gemma3-27b");
        String row = r.out().lines().filter(l -> l.strip().startsWith("per-group / every layer")).findFirst().orElseThrow();
        assertThat(row.substring("  per-group / every layer".length()).strip()).as(r.out()).startsWith("n/a ");
        assertThat(r.out()).doesNotContain("NaN").doesNotContain("Infinity");
    }

    /** One request: its p50, p90, p99, mean and max are its own time, exactly (HdrHistogram's p50 was 3.267, the mean 3.266). */
    @Test
    void aLoneRequestsPercentilesAreItsTime() throws IOException {
        Path one = TraceFiles.write(dir, TraceFiles.request(0, 1300, 5, 0, 1, 2));
        CliRun r = CliRun.of("replay", "--trace", one.toString(), "--mode", "timed");
        assertThat(r.code()).as(r.err()).isZero();
        for (String name : List.of("TTFT", "end-to-end")) {
            String row = r.out().lines().filter(l -> l.startsWith("  " + name + " ")).findFirst().orElseThrow();
            String[] cells = row.substring(2 + 28).strip().split(" +");
            assertThat(cells).as(row).hasSize(5);
            assertThat(Arrays.stream(cells).distinct().count()).as(row).isEqualTo(1);
        }
    }

    /** generate --device-blocks 1 --block-size 1 said "the device pool has only 1 blocks". */
    @Test
    void aPoolOfOneBlockIsSingular() {
        CliRun r = CliRun.of("generate", "--model", ReferenceRecords.model().toString(), "--tokenizer",
                ReferenceRecords.tokenizer().toString(), "--prompt", "Once upon a time", "--device-blocks", "1",
                "--block-size", "1", "--max-tokens", "4");
        assertThat(r.code()).as(r.err()).isEqualTo(2);
        assertThat(r.err()).contains("but the device pool has 1 (--device-blocks); give --device-blocks 8 or more").doesNotContain("1 blocks");
    }
}

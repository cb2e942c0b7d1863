package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvtier.engine.ReferenceRecords;
import io.kvtier.engine.ReferenceRecords.Record;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@code ./kvtier generate} on the real model: reference outputs as JSON lines, and bad input. */
class GenerateCommandTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final List<Record> RECORDS = ReferenceRecords.load();

    @TempDir
    Path dir;

    private String model() {
        return ReferenceRecords.model().toString();
    }

    private String tokenizer() {
        return ReferenceRecords.tokenizer().toString();
    }

    /** Every record through the CLI, all prompts of one max-tokens value submitted at once. */
    @ParameterizedTest(name = "block size {0}, {1} device blocks")
    @CsvSource({"16, 0", "16, 32", "64, 8"})
    void jsonlReproducesEveryReferenceRecord(int blockSize, int deviceBlocks) throws IOException {
        Path stats = dir.resolve("stats.json");
        for (int i = 0; i < RECORDS.size(); i++) {
            Record rec = RECORDS.get(i);
            Path prompts = dir.resolve("p" + i + ".txt");
            Files.writeString(prompts, rec.prompt() + "\n");
            CliRun r = CliRun.of("generate", "--model", model(), "--tokenizer", tokenizer(), "--prompts", prompts.toString(),
                    "--max-tokens", String.valueOf(rec.maxTokens()), "--output", "jsonl", "--block-size", String.valueOf(blockSize),
                    "--device-blocks", String.valueOf(deviceBlocks), "--stats-json", stats.toString());
            assertThat(r.code()).as("record %d: %s", i, r.err()).isZero();
            JsonNode o = JSON.readTree(r.out().lines().findFirst().orElseThrow());
            assertThat(ints(o.get("prompt_ids"))).as("record %d", i).containsExactly(rec.promptIds());
            assertThat(ints(o.get("generated_ids"))).as("record %d", i).containsExactly(rec.expectedOutput());
            assertThat(o.get("text").asText()).isEqualTo(rec.text());
            JsonNode s = JSON.readTree(stats.toFile());
            assertThat(s.get("device_blocks_free_at_end").asInt())
                    .isEqualTo(s.get("device_blocks_total").asInt() - s.get("device_blocks_cached_at_end").asInt());
        }
    }

    /**
     * stories260K.gguf with the tokenizer from its own metadata: every record's prompt ids and
     * generated ids (llama.cpp does not stop at BOS as run.c does, so each runs to exactly the
     * record's length, the final BOS included).
     */
    @Test
    void ggufModelWithItsOwnTokenizerReproducesEveryReferenceRecord() throws IOException {
        String gguf = ReferenceRecords.shared().resolve("models/gguf/stories260K.gguf").toString();
        for (int i = 0; i < RECORDS.size(); i++) {
            Record rec = RECORDS.get(i);
            Path prompts = dir.resolve("g" + i + ".txt");
            Files.writeString(prompts, rec.prompt() + "\n");
            CliRun r = CliRun.of("generate", "--model", gguf, "--prompts", prompts.toString(),
                    "--max-tokens", String.valueOf(rec.expectedOutput().length), "--output", "jsonl", "--device-blocks", "64");
            assertThat(r.code()).as("record %d: %s", i, r.err()).isZero();
            JsonNode o = JSON.readTree(r.out().lines().findFirst().orElseThrow());
            assertThat(ints(o.get("prompt_ids"))).as("record %d", i).containsExactly(rec.promptIds());
            assertThat(ints(o.get("generated_ids"))).as("record %d", i).containsExactly(rec.expectedOutput());
        }
        CliRun bad = CliRun.of("generate", "--model", gguf, "--tokenizer", tokenizer(), "--prompt", "x");
        assertThat(bad.code()).isEqualTo(2);
        assertThat(bad.err().strip()).contains("--tokenizer is for llama2.c checkpoints").doesNotContain("\n");
    }

    @Test
    void allRecordsAtOnceWithASmallPoolPreemptAndMatch() throws IOException {
        // Prompts of different max tokens: submit all with the largest and compare the prefix each record fixes.
        Path prompts = dir.resolve("all.txt");
        List<String> lines = new ArrayList<>();
        for (Record rec : RECORDS) {
            lines.add(rec.prompt());
        }
        Files.write(prompts, lines);
        Path stats = dir.resolve("stats.json");
        CliRun r = CliRun.of("generate", "--model", model(), "--tokenizer", tokenizer(), "--prompts", prompts.toString(),
                "--max-tokens", "64", "--output", "jsonl", "--block-size", "64", "--device-blocks", "8",
                "--stats-json", stats.toString());
        assertThat(r.code()).as(r.err()).isZero();
        List<String> out = r.out().lines().toList();
        assertThat(out).hasSize(RECORDS.size());
        // Printed in completion order: each object names its prompt's input position.
        JsonNode[] byIndex = new JsonNode[RECORDS.size()];
        for (String line : out) {
            JsonNode o = JSON.readTree(line);
            byIndex[o.get("index").asInt()] = o;
        }
        for (int i = 0; i < RECORDS.size(); i++) {
            int[] expected = RECORDS.get(i).expectedOutput();
            assertThat(byIndex[i]).as("record %d printed", i).isNotNull();
            assertThat(byIndex[i].get("prompt").asText()).isEqualTo(RECORDS.get(i).prompt());
            int[] got = ints(byIndex[i].get("generated_ids"));
            int n = Math.min(64, expected.length);
            assertThat(got).as("record %d", i).startsWith(java.util.Arrays.copyOf(expected, n));
        }
        assertThat(JSON.readTree(stats.toFile()).get("preemptions").asInt()).isPositive();
    }

    @Test
    void badInputGivesOneLineAndExitTwo() throws IOException {
        Path truncated = dir.resolve("trunc.bin");
        Files.write(truncated, java.util.Arrays.copyOf(Files.readAllBytes(ReferenceRecords.model()), 100_000));
        Path foreign = dir.resolve("foreign.bin");
        Files.writeString(foreign, "this is not a model, just some text that is long enough".repeat(10));
        Path empty = dir.resolve("empty.txt");
        Files.writeString(empty, "");
        Path longPrompt = dir.resolve("long.txt");
        Files.writeString(longPrompt, "hello ".repeat(600) + "\n");
        String[][] cases = {
            {"--model", dir.resolve("missing.bin").toString()},
            {"--model", truncated.toString()},
            {"--model", foreign.toString()},
            {"--tokenizer", dir.resolve("missing.tok").toString()},
            {"--prompts", empty.toString()},
            {"--prompts", longPrompt.toString()},
            {"--no-such-flag"},
            {"--max-tokens", "0"},
            {"--top-p", "0"},
            {"--block-size", "0"},
            {"--host-cache-bytes", "lots"},
        };
        for (String[] c : cases) {
            List<String> args = new ArrayList<>(List.of("generate", "--model", model(), "--tokenizer", tokenizer(), "--prompt", "hi"));
            args.addAll(List.of(c));
            CliRun r = CliRun.of(args.toArray(String[]::new));
            assertThat(r.code()).as("%s -> %s", List.of(c), r.err()).isEqualTo(2);
            assertThat(r.err().strip().lines().toList()).as("%s", List.of(c)).hasSize(1);
            assertThat(r.err()).startsWith("kvtier: ").doesNotContain("Exception", "\tat ");
            assertThat(r.out()).isEmpty();
        }
    }

    /**
     * Issue 16 item 6: without --device-blocks the pool holds the prompts at their longest and no
     * more, the summary reports the memory each part holds, and a pool larger than the machine
     * can reserve is refused in one line.
     */
    @Test
    void theDefaultPoolFitsTheRequestsAndTheSummaryReportsMemory() throws IOException {
        Path stats = dir.resolve("stats.json");
        CliRun r = CliRun.of("generate", "--model", model(), "--tokenizer", tokenizer(), "--prompt", "Once upon a time",
                "--prompt", "a", "--max-tokens", "40", "--output", "jsonl", "--stats-json", stats.toString());
        assertThat(r.code()).as(r.err()).isZero();
        JsonNode s = JSON.readTree(stats.toFile());
        int blocks = 0;
        for (String line : r.out().lines().toList()) {
            blocks += (JSON.readTree(line).get("prompt_ids").size() + 40 + 15) / 16;
        }
        assertThat(s.get("device_blocks_total").asInt()).as("blocks of both prompts with 40 new tokens").isEqualTo(blocks);
        JsonNode m = s.get("memory");
        long bytesPerBlock;
        try (io.kvtier.model.Checkpoint c = io.kvtier.model.Checkpoint.load(ReferenceRecords.model())) {
            bytesPerBlock = c.config().kvLayout(16).bytesPerBlock();
        }
        assertThat(m.get("device_pool_reserved_bytes").asLong()).isEqualTo(blocks * bytesPerBlock);
        assertThat(m.get("device_pool_resident_bytes").asLong()).isPositive()
                .isLessThanOrEqualTo(m.get("device_pool_reserved_bytes").asLong() + 4096);
        assertThat(m.get("model_file_bytes").asLong()).isEqualTo(Files.size(ReferenceRecords.model()));
        assertThat(m.get("peak_resident_bytes").asLong()).isGreaterThanOrEqualTo(m.get("resident_bytes").asLong());
        assertThat(r.err()).containsOnlyOnce("kvtier: memory: resident ");

        CliRun huge = CliRun.of("generate", "--model", model(), "--tokenizer", tokenizer(), "--prompt", "a",
                "--device-blocks", "2000000000");
        assertThat(huge.code()).as(huge.err()).isEqualTo(2);
        assertThat(huge.err().strip().lines().toList()).hasSize(1);
        assertThat(huge.err()).startsWith("kvtier: not enough memory").contains("--device-blocks").doesNotContain("\tat ");
    }

    /** Sizes that make no sense say so in one line: a fractional byte count, and a disk tier of 0 bytes with its way out. */
    @Test
    void fractionalBytesAndAnEmptyDiskTierAreRefusedInOneLine() {
        CliRun half = CliRun.of("generate", "--model", model(), "--tokenizer", tokenizer(), "--prompt", "a",
                "--host-cache-bytes", "1.5");
        assertThat(half.code()).as(half.err()).isEqualTo(2);
        assertThat(half.err().strip())
                .isEqualTo("kvtier: --host-cache-bytes: '1.5' is not a whole number of bytes (e.g. 4096, 256M, 1.5G)");
        CliRun zero = CliRun.of("generate", "--model", model(), "--tokenizer", tokenizer(), "--prompt", "a",
                "--disk-cache-dir", dir.resolve("d").toString(), "--disk-cache-bytes", "0");
        assertThat(zero.code()).as(zero.err()).isEqualTo(2);
        assertThat(zero.err().strip()).isEqualTo(
                "kvtier: --disk-cache-bytes must be at least 1 byte, got '0' (leave out --disk-cache-dir for no disk tier)");
    }

    /** The same rule and the same call as serve's ({@code OffloadOptions.check}, {@code Checks.needs}). */
    @Test
    void flagsWithoutTheirPartnerAreRefusedNamingBoth() {
        for (String[] c : List.of(
                new String[] {"--disk-fsync needs --disk-cache-dir", "--disk-fsync", "data"},
                new String[] {"--disk-scan-wait needs --disk-cache-dir", "--disk-scan-wait", "0"},
                new String[] {"--eviction needs the host tier (--host-cache-bytes > 0)", "--eviction", "arc", "--host-cache-bytes", "0"},
                new String[] {"--offload-decode needs the host tier", "--offload-decode", "--host-cache-bytes", "0"},
                new String[] {"--disk-cache-dir needs the host tier", "--disk-cache-dir", dir.toString(), "--host-cache-bytes", "0"},
                new String[] {"--clear-device-cache-between needs --sequential", "--clear-device-cache-between"},
                // trial33: accepted silently, though one request runs at a time
                new String[] {"--max-running has no effect with --sequential: one request runs at a time", "--sequential",
                        "--max-running", "4"},
                new String[] {"--remote-ttl needs --remote-url", "--remote-ttl", "60"},
                new String[] {"--remote-ca-file needs --remote-url", "--remote-ca-file", dir.toString()},
                new String[] {"--remote-ca-file is for TLS: give rediss:// URLs", "--remote-url", "redis://127.0.0.1:1",
                        "--remote-ca-file", dir.toString()},
                new String[] {"--remote-ca-file " + dir.resolve("absent.pem") + ": no readable file there",
                        "--remote-url", "rediss://127.0.0.1:1", "--remote-ca-file", dir.resolve("absent.pem").toString()},
                new String[] {"--remote-tenant must be 1 to 64 characters of A-Z a-z 0-9 _ . -, got 'a b'", "--remote-url",
                    "redis://127.0.0.1:1", "--remote-tenant", "a b"},
                new String[] {"--remote-tenant must be 1 to 64 characters of A-Z a-z 0-9 _ . -, got 'a\\u0009b'", "--remote-url",
                    "redis://127.0.0.1:1", "--remote-tenant", "a\tb"},
                new String[] {"--remote-url 'redis://127.0.0.1:99999': the port must be a number from 1 to 65535, got '99999'",
                        "--remote-url", "redis://127.0.0.1:99999"},
                new String[] {"--remote-url 'redis://localhost:63x9': the port must be a number from 1 to 65535, got '63x9'",
                        "--remote-url", "redis://localhost:63x9"},
                new String[] {"--remote-url 'redis://:6379' names no host", "--remote-url", "redis://:6379"},
                new String[] {"--remote-url 'redis://127.0.0.1:6379/abc': the database (the URL's path) must be a number from 0, "
                        + "as in redis://host:port/3, got 'abc'", "--remote-url", "redis://127.0.0.1:6379/abc"},
                new String[] {"the database (the URL's path) must be a number from 0, as in redis://host:port/3, got '-1'",
                        "--remote-url", "redis://127.0.0.1:6379/-1"},
                new String[] {"got '99999999999'", "--remote-url", "redis://127.0.0.1:6379/99999999999"},
                new String[] {"--remote-url 'redis://127.0.0.1:6379:5': host '127.0.0.1:6379' has a colon; expected "
                        + "redis://[user@]host:port (an IPv6 address in brackets)", "--remote-url", "redis://127.0.0.1:6379:5"},
                new String[] {"--remote-url redis://kvtier-a@127.0.0.1:1 names user kvtier-a but no password was given: give it with "
                        + "--remote-password-file or KVTIER_REMOTE_PASSWORD", "--remote-url", "redis://kvtier-a@127.0.0.1:1"},
                new String[] {"--remote-url 'redis://a b:6379' is not a URL", "--remote-url", "redis://a b:6379"},
                new String[] {"--remote-url must not hold a password (redis://***@127.0.0.1:6379)", "--remote-url",
                        "redis://u:se@cret@127.0.0.1:6379"},
                new String[] {"--cache-salt: the text is not valid UTF-8 (the JVM replaced bytes at character 2 with U+FFFD",
                        "--cache-salt", "a\uFFFDb"},
                new String[] {"--remote-url 'redis://127.0.0.1:6379?timeout=10s': kvtier reads no query ('?timeout=10s'); give the "
                        + "database as the path (redis://host:port/3), the timeout with --remote-timeout", "--remote-url",
                        "redis://127.0.0.1:6379?timeout=10s"},
                new String[] {"--remote-url 'redis://127.0.0.1:6379/2#x': kvtier reads no fragment ('#x')", "--remote-url",
                        "redis://127.0.0.1:6379/2#x"},
                new String[] {"--store-horizon needs --store-policy lazy", "--store-horizon", "4"},
                new String[] {"--store-policy needs the host tier", "--store-policy", "lazy", "--host-cache-bytes", "0"},
                new String[] {"--load-policy needs the host tier", "--load-policy", "faster", "--host-cache-bytes", "0"})) {
            List<String> args = new ArrayList<>(List.of("generate", "--model", model(), "--tokenizer", tokenizer(), "--prompt", "hi"));
            args.addAll(List.of(c).subList(1, c.length));
            CliRun r = CliRun.of(args.toArray(String[]::new));
            assertThat(r.code()).as("%s -> %s", args, r.err()).isEqualTo(2);
            assertThat(r.err()).startsWith("kvtier: ").doesNotContain("Exception");
            assertThat(r.err().strip().lines().toList()).hasSize(1);
            assertThat(r.err()).contains(c[0]);
            assertThat(r.out()).isEmpty();
        }
    }

    /**
     * Issue 9: a flag spelled out with the value the command uses anyway is not refused for lack
     * of its partner (a new user's {@code --prefill-priority off} without the host tier was); only a
     * value that needs the partner is.
     */
    @Test
    void flagsGivenTheValueTheCommandUsesAnywayAreAcceptedWithoutTheirPartner() {
        List<String> base = List.of("generate", "--model", model(), "--tokenizer", tokenizer(), "--prompt", "hi", "--max-tokens", "2",
                "--host-cache-bytes", "0");
        List<String> asDefault = new ArrayList<>(base);
        asDefault.addAll(List.of("--prefill-priority", "off", "--eviction", "DUEL", "--store-policy", "eager", "--load-policy", "always",
                "--blocks-per-chunk", "1", "--store-horizon", "64"));
        CliRun ok = CliRun.of(asDefault.toArray(String[]::new));
        assertThat(ok.code()).as(ok.err()).isZero();
        List<String> on = new ArrayList<>(base);
        on.addAll(List.of("--prefill-priority", "on"));
        CliRun refused = CliRun.of(on.toArray(String[]::new));
        assertThat(refused.code()).as(refused.err()).isEqualTo(2);
        assertThat(refused.err().strip()).isEqualTo("kvtier: --prefill-priority on needs the host tier (--host-cache-bytes > 0)");
        List<String> twoBlocks = new ArrayList<>(base);
        twoBlocks.addAll(List.of("--blocks-per-chunk", "2"));
        assertThat(CliRun.of(twoBlocks.toArray(String[]::new)).err()).contains("--blocks-per-chunk needs the host tier");
    }

    private static int[] ints(JsonNode a) {
        int[] out = new int[a.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = a.get(i).asInt();
        }
        return out;
    }

    /** Issue 14 item 8: a disk cache another tier owns is used read-only, and the user is told in one line. */
    @Test
    void aDiskCacheOwnedByAnotherTierIsReadOnlyAndSaysSoInOneLine() throws IOException {
        try (io.kvtier.tier.disk.DiskStore owner = DiskOwners.ownReferenceModel(dir)) {
            CliRun r = CliRun.of("generate", "--model", model(), "--tokenizer", tokenizer(), "--prompt", "Once upon a time",
                    "--max-tokens", "2", "--disk-cache-dir", dir.toString());
            assertThat(r.code()).isZero();
            assertThat(r.err()).containsOnlyOnce("only reads it").doesNotContain("\tat ").doesNotContain("Exception");
        }
    }
}

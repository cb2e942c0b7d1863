package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvtier.engine.ReferenceRecords;
import io.kvtier.model.gguf.LlamaCppReference;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code generate}'s offload summary on a model with two KV groups (the gemma3 fixture: group 0
 * full attention, one layer; group 1 a window of 16, five layers): the totals count both groups'
 * blocks and bytes, and each group has a line and a {@code groups} entry; a one-group model's
 * summary has neither.
 */
class GenerateKvGroupsTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    /**
     * trial33: llama.cpp's first greedy token on the gemma3 file's long prompt is {@code <end_of_turn>}
     * (id 5), which ends the request at once: the summary said "first token at none" and nothing why.
     */
    @Test
    void aRequestWhoseFirstTokenIsAStopTokenIsExplained() throws IOException {
        Path folder = LlamaCppReference.folder();
        LlamaCppReference longPrompt = LlamaCppReference.load(folder.resolve("gemma3-spm515-f32.ref.jsonl")).get(2);
        assertThat(longPrompt.generatedIds()[0]).isEqualTo(5);
        CliRun r = CliRun.of("generate", "--model", folder.resolve("gemma3-spm515-f32.gguf").toString(), "--prompt",
                longPrompt.promptText(), "--max-tokens", "4", "--host-cache-bytes", "0");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.err()).contains(" 0 generated in ")
                .contains("first token at none (no request produced a token: a stop token sampled first ends a request without one)");
    }

    @Test
    void theSummaryCountsEveryKvGroupAndShowsEach() throws IOException {
        Path folder = LlamaCppReference.folder();
        List<LlamaCppReference> refs = LlamaCppReference.load(folder.resolve("gemma3-spm515-f32.ref.jsonl"));
        Path prompts = dir.resolve("prompts.txt");
        Files.write(prompts, List.of(refs.get(1).promptText().replace("\n", " "), refs.get(2).promptText().replace("\n", " ")));
        Path stats = dir.resolve("stats.json");
        CliRun r = CliRun.of("generate", "--model", folder.resolve("gemma3-spm515-f32.gguf").toString(), "--prompts",
                prompts.toString(), "--max-tokens", "8", "--host-cache-bytes", "16777216", "--stats-json", stats.toString());
        assertThat(r.code()).as(r.err()).isZero();
        JsonNode s = JSON.readTree(stats.toFile());
        JsonNode groups = s.get("groups");
        assertThat(groups).hasSize(2);
        JsonNode full = groups.get(0);
        JsonNode window = groups.get(1);
        assertThat(full.get("window").asInt()).isZero();
        assertThat(window.get("window").asInt()).isEqualTo(16);
        long fullBlocks = full.get("blocks_stored").get("host").asLong();
        long windowBlocks = window.get("blocks_stored").get("host").asLong();
        assertThat(windowBlocks).as("the window group stores only blocks still in the window").isPositive().isLessThan(fullBlocks);
        assertThat(s.get("blocks_stored").get("host").asLong()).isEqualTo(fullBlocks + windowBlocks);
        // A full-group block holds 1 layer (4,096 B), a window block 5 layers (20,480 B).
        assertThat(full.get("bytes_stored").asLong()).isEqualTo(fullBlocks * 4_096);
        assertThat(window.get("bytes_stored").asLong()).isEqualTo(windowBlocks * 20_480);
        assertThat(s.get("bytes_stored").asLong()).isEqualTo(fullBlocks * 4_096 + windowBlocks * 20_480);
        assertThat(window.get("window_blocks_skipped").asLong()).isPositive();
        assertThat(s.get("host_chunks_used").asLong())
                .isEqualTo(full.get("host_chunks_used").asLong() + window.get("host_chunks_used").asLong());
        assertThat(r.err()).contains("kvtier: offload: external hit tokens none, blocks stored host " + (fullBlocks + windowBlocks)
                        + ", loaded none, ")
                .contains("kvtier: offload: KV group 0 (full attention): blocks stored host " + fullBlocks + ", loaded none, ")
                .contains("kvtier: offload: KV group 1 (window 16): blocks stored host " + windowBlocks + ", loaded none, ");
    }

    @Test
    void aOneGroupModelHasNoPerGroupSummary() throws IOException {
        Path stats = dir.resolve("stats.json");
        CliRun r = CliRun.of("generate", "--model", ReferenceRecords.model().toString(), "--tokenizer",
                ReferenceRecords.tokenizer().toString(), "--prompt", ReferenceRecords.load().get(7).prompt(), "--max-tokens", "8",
                "--host-cache-bytes", "16777216", "--stats-json", stats.toString());
        assertThat(r.code()).as(r.err()).isZero();
        JsonNode s = JSON.readTree(stats.toFile());
        assertThat(s.has("groups")).isFalse();
        assertThat(s.get("blocks_stored").get("host").asLong()).isPositive();
        assertThat(r.err()).contains("kvtier: offload: external hit tokens none, blocks stored host ")
                .doesNotContain("KV group", "{");
    }

    /**
     * A lazy store policy with a model of two KV groups is refused from the file's header, before the
     * model loads: a copy of the gemma3 fixture cut after its header (no tensor data, so any load
     * fails) gets the policy's line, not a format error, in generate, serve and bench serve.
     */
    @Test
    void aLazyStorePolicyWithTwoKvGroupsIsRefusedBeforeTheModelLoads() throws IOException {
        Path gemma = LlamaCppReference.folder().resolve("gemma3-spm515-f32.gguf");
        long dataStart;
        try (io.kvtier.model.gguf.GgufFile f = io.kvtier.model.gguf.GgufFile.open(gemma)) {
            dataStart = f.dataOffset();
        }
        Path headerOnly = dir.resolve("gemma3-header-only.gguf");
        Files.write(headerOnly, java.util.Arrays.copyOf(Files.readAllBytes(gemma), (int) dataStart));
        String line = "kvtier: --store-policy lazy is not built for a model with sliding-window layers: use --store-policy eager"
                + System.lineSeparator();
        for (String[] command : new String[][] {{"generate", "--prompt", "hi"}, {"serve", "--port", "0"},
            {"bench", "serve", "--conversations", "1", "--turns", "1"}}) {
            String[] args = java.util.stream.Stream.concat(java.util.Arrays.stream(command),
                    java.util.stream.Stream.of("--model", headerOnly.toString(), "--store-policy", "lazy")).toArray(String[]::new);
            CliRun r = CliRun.of(args);
            assertThat(r.code()).as(String.join(" ", command) + ": " + r.err()).isEqualTo(2);
            assertThat(r.err()).as(String.join(" ", command)).isEqualTo(line);
            assertThat(r.out()).isEmpty();
        }
        CliRun eager = CliRun.of("generate", "--prompt", "hi", "--model", headerOnly.toString());
        assertThat(eager.code()).isEqualTo(2);
        assertThat(eager.err()).as("without the policy the load itself fails on the cut file").startsWith("kvtier: --model: ");
    }
}

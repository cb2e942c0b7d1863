package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.engine.ReferenceRecords;
import io.kvtier.engine.ReferenceRecords.Record;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Text output: streamed token by token (one prompt at a time) or whole per result, the same reference texts either way. */
class GenerateTextOutputTest {

    @TempDir
    Path dir;

    private CliRun run(Path prompts, int maxTokens, String... extra) {
        List<String> args = new java.util.ArrayList<>(List.of("generate", "--model", ReferenceRecords.model().toString(),
                "--tokenizer", ReferenceRecords.tokenizer().toString(), "--prompts", prompts.toString(),
                "--max-tokens", String.valueOf(maxTokens)));
        args.addAll(List.of(extra));
        return CliRun.of(args.toArray(String[]::new));
    }

    @Test
    void sequentialTextIsStreamedAndEqualsTheJsonTexts() throws IOException {
        List<Record> recs = ReferenceRecords.load();
        Path prompts = dir.resolve("p.txt");
        Files.write(prompts, recs.stream().map(Record::prompt).toList());
        CliRun jsonl = run(prompts, 64, "--output", "jsonl");
        assertThat(jsonl.code()).as(jsonl.err()).isZero();
        String[] texts = new String[recs.size()];
        for (String line : jsonl.out().lines().toList()) {
            var o = new com.fasterxml.jackson.databind.ObjectMapper().readTree(line);
            texts[o.get("index").asInt()] = o.get("text").asText();
        }
        StringBuilder expected = new StringBuilder();
        for (int i = 0; i < texts.length; i++) {
            expected.append(i == 0 ? "" : "\n").append("--- prompt ").append(i + 1).append('\n').append(texts[i]).append('\n');
        }
        CliRun sequential = run(prompts, 64, "--sequential");
        assertThat(sequential.code()).as(sequential.err()).isZero();
        assertThat(sequential.out()).isEqualTo(expected.toString());

        // All at once: whole texts in completion order, each under its input number.
        CliRun batch = run(prompts, 64);
        assertThat(batch.code()).as(batch.err()).isZero();
        for (int i = 0; i < texts.length; i++) {
            assertThat(batch.out()).contains("--- prompt " + (i + 1) + "\n" + texts[i] + "\n");
        }
        assertThat(batch.out()).hasSameSizeAs(expected.toString());
    }

    @Test
    void oneReferencePromptStreamsItsReferenceText() throws IOException {
        Record rec = ReferenceRecords.load().get(0);
        Path prompts = dir.resolve("one.txt");
        Files.writeString(prompts, rec.prompt() + "\n");
        CliRun r = run(prompts, rec.maxTokens());
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).isEqualTo(rec.text() + "\n");
    }
}

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

    /**
     * stories260K as GGUF prints what the llama2.c checkpoint prints on every output path: jsonl
     * texts, several prompts' whole texts and streamed texts (the jsonl and whole texts once kept
     * SentencePiece's prefix space after BOS: " Once upon a time").
     */
    @Test
    void aSentencePieceGgufPrintsTheCheckpointsTextsOnEveryPath() throws IOException {
        List<Record> recs = ReferenceRecords.load().subList(0, 2);
        Path gguf = ReferenceRecords.shared().resolve("models/gguf/stories260K.gguf");
        List<String> common = List.of("--prompt", recs.get(0).prompt(), "--prompt", recs.get(1).prompt(), "--max-tokens", "12");
        List<String> ggufArgs = new java.util.ArrayList<>(List.of("generate", "--model", gguf.toString()));
        ggufArgs.addAll(common);
        List<String> binArgs = new java.util.ArrayList<>(List.of("generate", "--model", ReferenceRecords.model().toString(),
                "--tokenizer", ReferenceRecords.tokenizer().toString()));
        binArgs.addAll(common);
        String[] binTexts = jsonlTexts(binArgs);
        String[] ggufTexts = jsonlTexts(ggufArgs);
        assertThat(binTexts[0]).startsWith(recs.get(0).prompt());
        assertThat(binTexts[1]).startsWith(recs.get(1).prompt());
        assertThat(ggufTexts).containsExactly(binTexts);
        String expected = "--- prompt 1\n" + binTexts[0] + "\n\n--- prompt 2\n" + binTexts[1] + "\n";
        for (String mode : new String[] {"--sequential", null}) {
            List<String> args = new java.util.ArrayList<>(ggufArgs);
            if (mode != null) {
                args.add(mode);
            }
            CliRun r = CliRun.of(args.toArray(String[]::new));
            assertThat(r.code()).as(r.err()).isZero();
            assertThat(r.out()).as("gguf text output %s", mode).isIn(expected,
                    "--- prompt 2\n" + binTexts[1] + "\n\n--- prompt 1\n" + binTexts[0] + "\n");
        }
    }

    private static String[] jsonlTexts(List<String> args) throws IOException {
        List<String> all = new java.util.ArrayList<>(args);
        all.addAll(List.of("--output", "jsonl"));
        CliRun r = CliRun.of(all.toArray(String[]::new));
        assertThat(r.code()).as(r.err()).isZero();
        String[] texts = new String[2];
        for (String line : r.out().lines().toList()) {
            var o = new com.fasterxml.jackson.databind.ObjectMapper().readTree(line);
            texts[o.get("index").asInt()] = o.get("text").asText();
        }
        return texts;
    }
}

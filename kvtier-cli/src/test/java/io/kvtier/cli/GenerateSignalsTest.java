package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvtier.engine.ReferenceRecords;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 14 item 2, in a child process running the real {@code Main}: results are printed as they
 * finish; SIGTERM and SIGINT stop cleanly (finished results kept, summary written, exit 143 and
 * 130); a closed standard output stops the run quietly (exit 141) instead of computing on.
 */
class GenerateSignalsTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    /** A run far longer than the test waits: 1000 prompts, one after another, up to 200 tokens each. */
    private Process longRun(Path err, String... extra) throws IOException {
        Path prompts = dir.resolve("prompts.txt");
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            lines.add("Once upon a time, number " + i);
        }
        Files.write(prompts, lines);
        List<String> args = new ArrayList<>(List.of("generate", "--model", ReferenceRecords.model().toString(),
                "--tokenizer", ReferenceRecords.tokenizer().toString(), "--prompts", prompts.toString(), "--sequential",
                "--max-tokens", "200", "--output", "jsonl", "--threads", "1"));
        args.addAll(List.of(extra));
        return ChildCli.start(err, args.toArray(String[]::new));
    }

    private static void signal(Process p, String name) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + name, String.valueOf(p.pid())).inheritIO().start();
        assertThat(kill.waitFor()).isZero();
    }

    private void stopsCleanlyOn(String signal, int exitCode) throws Exception {
        Path err = dir.resolve("err-" + signal + ".txt");
        Process p = longRun(err);
        List<String> out = new ArrayList<>();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            out.add(r.readLine()); // the first result arrives while the other 999 are still to run
            assertThat(out.getFirst()).as("first result line; stderr: %s", ChildCli.stderr(err)).isNotNull();
            signal(p, signal);
            for (String line; (line = r.readLine()) != null; ) {
                out.add(line);
            }
        }
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("exited").isTrue();
        String stderr = ChildCli.stderr(err);
        assertThat(p.exitValue()).as(stderr).isEqualTo(exitCode);
        assertThat(out.size()).as("finished results printed, not all 1000").isBetween(1, 999);
        for (int i = 0; i < out.size(); i++) {
            JsonNode o = JSON.readTree(out.get(i));
            assertThat(o.get("index").asInt()).as("sequential: completion order is input order").isEqualTo(i);
            assertThat(o.get("finish_reason").asText()).isIn("stop", "length");
        }
        assertThat(stderr).contains("kvtier: stopped by a signal: " + out.size() + " of 1000 prompts finished and printed, "
                + (1000 - out.size()) + " not");
        assertThat(stderr).contains(" prompt tokens (0 hit on device)").doesNotContain("Exception", "\tat ");
    }

    @Test
    void sigtermKeepsFinishedResultsWritesTheSummaryAndExits143() throws Exception {
        stopsCleanlyOn("TERM", 143);
    }

    @Test
    void sigintKeepsFinishedResultsWritesTheSummaryAndExits130() throws Exception {
        stopsCleanlyOn("INT", 130);
    }

    @Test
    void aClosedStandardOutputStopsTheRunQuietly() throws Exception {
        Path err = dir.resolve("err-pipe.txt");
        Path stats = dir.resolve("stats.json");
        Process p = longRun(err, "--stats-json", stats.toString());
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            assertThat(r.readLine()).isNotNull();
            assertThat(r.readLine()).isNotNull();
        } // as `| head -2`: the reader goes away
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("exited").isTrue();
        assertThat(p.exitValue()).as(ChildCli.stderr(err)).isEqualTo(141);
        assertThat(ChildCli.stderr(err)).as("quiet").isEmpty();
        assertThat(stats).as("no summary for a run nobody reads").doesNotExist();
    }
}

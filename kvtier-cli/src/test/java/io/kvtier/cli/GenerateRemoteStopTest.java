package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.engine.ReferenceRecords;
import io.kvtier.tier.remote.OwnRedis;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Trial 5's finding: a SIGTERM'd {@code generate --remote-url} printed its summary, then waited
 * for the 20 s stop watchdog ({@code did not stop within 20 s of the signal; exiting}). In a
 * child process running the real {@code Main} against its own redis-server: healthy, frozen
 * ({@code SIGSTOP}) under the run, and frozen from the start, it exits with 143 and the summary
 * within 10 s of the signal (a bound far below the watchdog's, generous on a loaded machine),
 * never through the watchdog.
 */
class GenerateRemoteStopTest {

    private static final int BOUND_SECONDS = 10;

    @TempDir
    Path dir;

    private enum Server { HEALTHY, FROZEN_UNDER_THE_RUN, FROZEN_FROM_THE_START }

    private void stopsPromptly(Server mode) throws Exception {
        try (OwnRedis redis = OwnRedis.start(dir.resolve("redis"))) {
            if (mode == Server.FROZEN_FROM_THE_START) {
                redis.freeze();
            }
            Path prompts = dir.resolve("prompts.txt");
            List<String> lines = new ArrayList<>();
            for (int i = 0; i < 1000; i++) {
                lines.add("Once upon a time, number " + i);
            }
            Files.write(prompts, lines);
            Path err = dir.resolve("err.txt");
            Process p = ChildCli.start(err, "generate", "--model", ReferenceRecords.model().toString(),
                    "--tokenizer", ReferenceRecords.tokenizer().toString(), "--prompts", prompts.toString(), "--sequential",
                    "--max-tokens", "200", "--output", "jsonl", "--threads", "1", "--host-cache-bytes", "16M",
                    "--remote-url", redis.url());
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                assertThat(r.readLine()).as("first result line; stderr: %s", ChildCli.stderr(err)).isNotNull();
                if (mode == Server.FROZEN_UNDER_THE_RUN) {
                    redis.freeze(); // the stores of the prompts still running wait on a server that never answers
                }
                Thread drain = Thread.ofVirtual().start(() -> { // a full pipe would hold the child's writes
                    try {
                        while (r.readLine() != null) {
                            // results after the first are not checked here (GenerateSignalsTest does)
                        }
                    } catch (IOException closed) {
                        // the child is gone
                    }
                });
                boolean exited = ChildCli.terminateWithin(p, BOUND_SECONDS);
                String stderr = ChildCli.stderr(err);
                assertThat(exited).as("exited within %d s of SIGTERM; stderr: %s", BOUND_SECONDS, stderr).isTrue();
                drain.join();
                assertThat(p.exitValue()).as(stderr).isEqualTo(143);
                assertThat(stderr).contains("kvtier: stopped by a signal: ", "kvtier: remote: ")
                        .doesNotContain("did not stop within", "Exception", "\tat ");
            } finally {
                if (mode != Server.HEALTHY) {
                    redis.thaw();
                }
            }
        }
    }

    @Test
    void aHealthyServer() throws Exception {
        stopsPromptly(Server.HEALTHY);
    }

    @Test
    void aServerFrozenUnderTheRun() throws Exception {
        stopsPromptly(Server.FROZEN_UNDER_THE_RUN);
    }

    @Test
    void aServerFrozenFromTheStart() throws Exception {
        stopsPromptly(Server.FROZEN_FROM_THE_START);
    }
}

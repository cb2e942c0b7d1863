package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvtier.engine.ReferenceRecords;
import io.kvtier.engine.ReferenceRecords.Record;
import io.kvtier.tier.remote.OwnRedis;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Trial 6's finding: a redis-server frozen ({@code SIGSTOP}) before {@code generate --remote-url}
 * starts accepts the TCP connection and never answers; the store's open waited for its 10 s
 * handshake deadline whatever {@code --remote-timeout} said, and a SIGTERM in that window took
 * seconds more. In a child process running the real {@code Main}: the run gives the reference
 * tokens, says in one line that the server has not answered within 3000 ms (4 x the default
 * 500 ms timeout, at least 3 s), and exits 0; a SIGTERM while the child's connection to the frozen
 * server is open (seen in {@code /proc/net/tcp}) exits with 143 within 10 s, the old wait's least.
 */
class GenerateRemoteFrozenAtStartTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int BOUND_SECONDS = 10;
    private static final Record RECORD = ReferenceRecords.load().get(3);

    @TempDir
    Path dir;

    private interface Child {
        void check(OwnRedis redis, Process p, Path err) throws Exception;
    }

    /** Runs generate on reference record {@link #RECORD} against a server frozen before the child starts. */
    private void withAFrozenServer(Child check) throws Exception {
        try (OwnRedis redis = OwnRedis.start(dir.resolve("redis"))) {
            redis.freeze();
            Path err = dir.resolve("err.txt");
            Process p = ChildCli.start(err, "generate", "--model", ReferenceRecords.model().toString(), "--tokenizer",
                    ReferenceRecords.tokenizer().toString(), "--prompt", RECORD.prompt(), "--max-tokens",
                    String.valueOf(RECORD.maxTokens()), "--output", "jsonl", "--threads", "1", "--host-cache-bytes", "16M",
                    "--remote-url", redis.url());
            try {
                check.check(redis, p, err);
            } finally {
                p.destroyForcibly().waitFor();
                redis.thaw();
            }
        }
    }

    @Test
    void generateGivesTheReferenceTokensAndSaysTheServerHasNotAnswered() throws Exception {
        withAFrozenServer((redis, p, err) -> {
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
            String stderr = ChildCli.stderr(err);
            assertThat(p.exitValue()).as(stderr).isZero();
            assertThat(stderr).contains("kvtier: remote tier: cannot reach " + redis.url()
                    + " (no answer within 3000 ms; still connecting); every lookup misses until it answers\n")
                    .contains(", breaker open (opened 1 time)\n") // trial10: the stats said open beside 0 openings
                    .doesNotContain("Exception", "\tat ");
            JsonNode o = JSON.readTree(out.lines().findFirst().orElseThrow());
            int[] ids = new int[o.get("generated_ids").size()];
            for (int j = 0; j < ids.length; j++) {
                ids[j] = o.get("generated_ids").get(j).asInt();
            }
            assertThat(ids).containsExactly(RECORD.expectedOutput());
        });
    }

    @Test
    void aSigtermDuringTheFrozenConnectExitsPromptlyWith143() throws Exception {
        withAFrozenServer((redis, p, err) -> {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (!connectedTo(redis.port()) && p.isAlive() && System.nanoTime() < end) {
                Thread.sleep(20);
            }
            assertThat(connectedTo(redis.port())).as("the child connected to the frozen server; stderr: %s",
                    ChildCli.stderr(err)).isTrue();
            boolean exited = ChildCli.terminateWithin(p, BOUND_SECONDS);
            String stderr = ChildCli.stderr(err);
            assertThat(exited).as("exited within %d s of SIGTERM; stderr: %s", BOUND_SECONDS, stderr).isTrue();
            assertThat(p.exitValue()).as(stderr).isEqualTo(143);
            assertThat(stderr).doesNotContain("did not stop within", "Exception", "\tat ");
        });
    }

    /**
     * Whether an established TCP connection to 127.0.0.1:{@code port} exists (a client's side, in
     * {@code /proc/net/tcp}, or in {@code tcp6} as {@code ::ffff:127.0.0.1} from a dual-stack socket, Java's default).
     */
    private static boolean connectedTo(int port) throws IOException {
        String remote = String.format(Locale.ROOT, "0100007F:%04X", port);
        for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
            List<String> lines = Files.readAllLines(Path.of(table));
            for (String line : lines.subList(1, lines.size())) {
                String[] f = line.trim().split("\\s+");
                if (f[2].endsWith(remote) && f[3].equals("01")) {
                    return true;
                }
            }
        }
        return false;
    }
}

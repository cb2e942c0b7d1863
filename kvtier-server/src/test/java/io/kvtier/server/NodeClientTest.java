package io.kvtier.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The official {@code openai} npm package (from {@code src/test/node}'s lockfile) drives the server:
 * {@code node --test} runs {@code client.test.js} against a server this test starts. Without node on
 * the PATH the test is skipped with a message, except when {@code CI=true}, where it fails.
 * {@code npm ci} runs first when {@code node_modules} is missing ({@code .ci/run} runs it too).
 */
class NodeClientTest {

    private static final Path DIR = Path.of("src/test/node");
    private static final String KEY = "node-test-key";
    private static final String FAULT_USER = "inject-mid-stream-fault";

    @Test
    void theOpenAiNpmPackageRunsItsChecksAgainstTheServer() throws Exception {
        boolean ci = "true".equals(System.getenv("CI"));
        if (!onPath("node") || !onPath("npm")) {
            assertThat(ci).as("node and npm are required when CI=true (.ci/run installs them)").isFalse();
            Assumptions.abort("node/npm not found on the PATH: skipping the openai npm package checks (CI runs them)");
        }
        if (!Files.isDirectory(DIR.resolve("node_modules/openai"))) {
            run(List.of("npm", "ci", "--no-audit", "--no-fund"), null, 300);
        }
        try (ServerFixture f = new ServerFixture(128, 8L << 20,
                ServerConfig.loopback(0).withApiKey(KEY).withTestOnlyStreamFaultUser(FAULT_USER))) {
            String out = run(List.of("node", "--test", "--test-reporter=tap", "client.test.js"),
                    new String[] {"KVTIER_BASE_URL=" + f.base() + "/v1", "KVTIER_API_KEY=" + KEY,
                            "KVTIER_MODEL=" + ServerFixture.MODEL, "KVTIER_FAULT_USER=" + FAULT_USER}, 300);
            assertThat(out).contains("# pass 7").contains("# fail 0");
            f.assertQuiescent();
        }
    }

    private static boolean onPath(String exe) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            if (Files.isExecutable(Path.of(dir, exe))) {
                return true;
            }
        }
        return false;
    }

    /** Runs a command in {@link #DIR}; fails with its output unless it exits 0 in time. */
    private static String run(List<String> cmd, String[] extraEnv, int seconds) throws IOException, InterruptedException {
        Path log = Files.createTempFile("kvtier-node-", ".log");
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(DIR.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile());
        if (extraEnv != null) {
            for (String kv : extraEnv) {
                int eq = kv.indexOf('=');
                pb.environment().put(kv.substring(0, eq), kv.substring(eq + 1));
            }
        }
        Process p = pb.start();
        boolean ended = p.waitFor(seconds, TimeUnit.SECONDS);
        if (!ended) {
            p.destroyForcibly().waitFor();
        }
        String out = Files.readString(log, StandardCharsets.UTF_8);
        Files.delete(log);
        assertThat(ended && p.exitValue() == 0).as(String.join(" ", cmd) + " failed:\n" + out).isTrue();
        return out;
    }
}

package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./kvtier serve} as users run it: bad flags exit 2 with one line; a real process (started
 * with this test's class path) serves, reads its key from a file, and on SIGTERM lets a stream in
 * flight finish within the grace, or aborts it with an {@code event: error} when the grace is 0.
 */
class ServeCommandTest {

    @Test
    void badServeFlagsExit2WithOneLine() {
        for (String[] args : List.of(
                new String[] {"serve", "--port", "70000"},
                new String[] {"serve", "--api-key", "a", "--api-key-env", "HOME"},
                new String[] {"serve", "--api-key-env", "KVTIER_TEST_NO_SUCH_VARIABLE"},
                new String[] {"serve", "--api-key-file", "/no/such/file"},
                new String[] {"serve", "--max-waiting", "-1"},
                new String[] {"serve", "--max-body-bytes", "lots"},
                new String[] {"serve", "--shutdown-grace", "-1"})) {
            CliRun r = CliRun.of(args);
            assertThat(r.code()).as(String.join(" ", args) + ": " + r.err()).isEqualTo(2);
            assertThat(r.err().strip().lines().count()).as(r.err()).isEqualTo(1);
        }
    }

    @Test
    void badAddressesAndFlagsWithoutTheirPartnerExit2WithOneLineNamingThem() throws Exception {
        try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            String inUse = String.valueOf(taken.getLocalPort());
            for (String[] c : List.of(
                    new String[] {"--host 256.1.1.1: not an IP address", "--host", "256.1.1.1"},
                    new String[] {"--host 192.0.2.7: 192.0.2.7 is not an address of this machine", "--host", "192.0.2.7"},
                    new String[] {"cannot listen on 127.0.0.1:" + inUse + ": ", "--port", inUse},
                    new String[] {"--kv-events-topic needs --kv-events-endpoint", "--kv-events-topic", "kv"},
                    new String[] {"--kv-events-block-hash needs --kv-events-endpoint", "--kv-events-block-hash", "bytes"},
                    new String[] {"--disk-fsync needs --disk-cache-dir", "--disk-fsync", "data"},
                    new String[] {"--disk-cache-bytes needs --disk-cache-dir", "--disk-cache-bytes", "2G"},
                    new String[] {"--eviction needs the host tier (--host-cache-bytes > 0)", "--eviction", "arc", "--host-cache-bytes", "0"},
                    new String[] {"--blocks-per-chunk needs the host tier", "--blocks-per-chunk", "2", "--host-cache-bytes", "0"},
                    new String[] {"--remote-tenant needs --remote-url", "--remote-tenant", "t"})) {
                List<String> args = new ArrayList<>(List.of("serve"));
                args.addAll(List.of(c).subList(1, c.length));
                if (!args.contains("--port")) {
                    args.addAll(List.of("--port", "0"));
                }
                CliRun r = CliRun.of(args.toArray(String[]::new));
                assertThat(r.code()).as(args + ": " + r.err()).isEqualTo(2);
                assertThat(r.err().strip().lines().toList()).as(args.toString()).hasSize(1);
                assertThat(r.err()).as(args.toString()).contains(c[0]).doesNotContain("Exception");
            }
        }
    }

    /**
     * Also (trial21): with a disk directory another process owns, serve says in one line that it
     * only reads it, as generate does (it said nothing, and wrote nothing there).
     */
    @Test
    void sigtermLetsAStreamInFlightFinishWithinTheGrace(@TempDir Path dir) throws Exception {
        io.kvtier.kv.Namespace ns;
        try (io.kvtier.model.Checkpoint c = io.kvtier.model.Checkpoint.load(io.kvtier.engine.ReferenceRecords.model())) {
            ns = io.kvtier.kv.Namespace.of(c.modelId(), c.config().kvLayout(16));
        }
        Path kv = dir.resolve("kv");
        try (io.kvtier.tier.disk.DiskStore owner = io.kvtier.tier.disk.DiskStore.open(kv, ns.digest(),
                io.kvtier.tier.disk.DiskFsync.NONE)) {
            assertThat(owner.role()).isEqualTo(io.kvtier.tier.disk.DiskStore.Role.OWNER);
            SseRun run = streamThenSigterm(dir, "30", List.of("--disk-cache-dir", kv.toString()));
            assertThat(run.lines).as(String.join("\n", run.lines)).anyMatch(l -> l.contains("\"finish_reason\":\""));
            assertThat(run.lines.getLast()).isEqualTo("data: [DONE]");
            assertThat(run.stderr).contains("kvtier: stopping").contains("kvtier: stopped")
                    .containsOnlyOnce("kvtier: disk cache " + kv).containsOnlyOnce("; this process only reads it");
        }
    }

    @Test
    void sigtermWithoutGraceAbortsTheStreamWithAnErrorEvent(@TempDir Path dir) throws Exception {
        // A random model slow enough that 400 tokens are still being generated when the signal comes.
        Path slow = dir.resolve("slow.bin");
        CliRun made = CliRun.of("make-model", slow.toString(), "--dim", "512", "--hidden-dim", "1536", "--layers", "8",
                "--heads", "8", "--kv-heads", "8", "--vocab", "512", "--seq-len", "1024");
        assertThat(made.code()).as(made.err()).isZero();
        SseRun run = streamThenSigterm(dir, "0", List.of("--model", slow.toString()));
        assertThat(run.lines).as(String.join("\n", run.lines)).contains("event: error");
        assertThat(String.join("\n", run.lines)).contains("shutting down").doesNotContain("[DONE]");
        assertThat(run.stderr).contains("kvtier: stopped");
    }

    /**
     * A new user's trial: a password given for a Redis without one passed generate and serve
     * silently where bench offload refused it. serve now says it as generate does, before it
     * serves: the remote tier off, with the password to leave out.
     */
    @Test
    void aPasswordForARemoteServerWithoutOneTurnsTheTierOffBeforeServing(@TempDir Path dir) throws Exception {
        Path password = Files.writeString(dir.resolve("password"), "some-password");
        Path err = dir.resolve("stderr.txt");
        try (io.kvtier.tier.remote.OwnRedis r = io.kvtier.tier.remote.OwnRedis.start(dir.resolve("r"))) {
            Process p = ChildCli.start(err, "serve", "--port", "0", "--threads", "1", "--host-cache-bytes", "4M", "--remote-url",
                    r.url(), "--remote-password-file", password.toString());
            try {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
                while (!ChildCli.stderr(err).contains("kvtier: serving ") && p.isAlive() && System.nanoTime() < deadline) {
                    Thread.sleep(50);
                }
                List<String> lines = ChildCli.stderr(err).lines().toList();
                assertThat(lines).as(String.join("\n", lines)).anyMatch(l -> l.startsWith("kvtier: serving "));
                assertThat(lines.subList(0, lines.indexOf(lines.stream().filter(l -> l.startsWith("kvtier: serving ")).findFirst()
                        .orElseThrow()))).contains("kvtier: remote tier off: authentication failed (ERR AUTH <password> called without"
                        + " any password configured for the default user. Are you sure your configuration is correct?): the server has"
                        + " no password for user default: leave out --remote-password-file " + password);
                assertThat(r.cli("DBSIZE")).isEqualTo("0");
            } finally {
                ChildCli.terminateWithin(p, 60);
            }
        }
    }

    private record SseRun(List<String> lines, String stderr) {
    }

    /** Starts a server process, begins a long greedy stream, sends SIGTERM, and returns what the client saw. */
    private static SseRun streamThenSigterm(Path dir, String grace, List<String> extra) throws Exception {
        Path keyFile = Files.writeString(dir.resolve("key"), "  file-key\n");
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        List<String> cmd = new ArrayList<>(List.of(java.toString(), "--add-modules", "jdk.incubator.vector",
                "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"), Main.class.getName(), "serve",
                "--port", "0", "--threads", "1", "--host-cache-bytes", "4M", "--api-key-file", keyFile.toString(),
                "--shutdown-grace", grace));
        cmd.addAll(extra);
        Path stderrFile = dir.resolve("stderr.txt");
        Process p = new ProcessBuilder(cmd).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(stderrFile.toFile()).start();
        try {
            int port = -1;
            Pattern serving = Pattern.compile("kvtier: serving \\S+ on http://127\\.0\\.0\\.1:(\\d+)/v1");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (port < 0 && p.isAlive() && System.nanoTime() < deadline) {
                Matcher m = serving.matcher(Files.readString(stderrFile));
                if (m.find()) {
                    port = Integer.parseInt(m.group(1));
                } else {
                    Thread.sleep(50);
                }
            }
            assertThat(port).as("the server's start line; stderr:\n" + Files.readString(stderrFile)).isPositive();
            CountDownLatch firstToken = new CountDownLatch(1);
            List<String> lines = new ArrayList<>();
            String body = "{\"prompt\": \"\", \"max_tokens\": 400, \"temperature\": 0, \"stream\": true}";
            HttpRequest req = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/completions"))
                    .header("Authorization", "Bearer file-key").POST(HttpRequest.BodyPublishers.ofString(body)).build();
            HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            CompletableFuture<Void> client = new CompletableFuture<>();
            Thread.ofVirtual().start(() -> {
                try {
                    HttpResponse<java.util.stream.Stream<String>> r = http.send(req, HttpResponse.BodyHandlers.ofLines());
                    r.body().forEach(l -> {
                        if (!l.isEmpty()) {
                            lines.add(l);
                        }
                        if (l.startsWith("data: {")) {
                            firstToken.countDown();
                        }
                    });
                } catch (IOException | InterruptedException e) {
                    lines.add("client failed: " + e);
                } finally {
                    firstToken.countDown();
                    client.complete(null);
                }
            });
            assertThat(firstToken.await(120, TimeUnit.SECONDS)).as("first token").isTrue();
            p.destroy(); // SIGTERM
            client.get(120, TimeUnit.SECONDS);
            assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("the server exits after SIGTERM").isTrue();
            return new SseRun(lines, Files.readString(stderrFile));
        } finally {
            p.destroyForcibly();
        }
    }
}

package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvtier.engine.ReferenceRecords;
import io.kvtier.engine.ReferenceRecords.Record;
import io.kvtier.text.Plural;
import io.kvtier.tier.remote.RedisServers;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Two real {@code kvtier generate} processes share one Redis: the first stores the reference
 * prompts, the second (its own empty host tier) loads every full chunk before each prompt's last
 * token from the remote tier and reproduces every reference record.
 */
class RemoteTierCliTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final List<Record> RECORDS = ReferenceRecords.load();
    /** Records whose prompts have at least one full 16-token block before their last token. */
    private static final int[] LONG_PROMPTS = {3, 4, 5, 7};

    @TempDir
    Path dir;

    /**
     * Runs generate on the long records' prompts in a new JVM against {@code urls} (one standalone
     * URL, or cluster seeds); returns its stdout (fails on a non-zero exit).
     */
    private String generate(List<String> urls, boolean cluster, String tenant, Path stats) throws IOException, InterruptedException {
        List<String> flags = new ArrayList<>();
        for (String url : urls) {
            flags.addAll(List.of("--remote-url", url));
        }
        flags.addAll(List.of("--remote-mode", cluster ? "cluster" : "standalone", "--remote-tenant", tenant, "--remote-timeout", "5000"));
        return generate(stats, flags.toArray(String[]::new));
    }

    /** The run's stderr without the JVM's incubator warning. */
    private List<String> stderr() throws IOException {
        return Files.readAllLines(dir.resolve("stderr.txt")).stream()
                .filter(l -> !l.startsWith("WARNING: Using incubator modules")).toList();
    }

    private String generate(Path stats, String... remoteFlags) throws IOException, InterruptedException {
        Path prompts = dir.resolve("prompts.txt");
        int maxTokens = 0;
        StringBuilder text = new StringBuilder();
        for (int i : LONG_PROMPTS) {
            text.append(RECORDS.get(i).prompt()).append('\n');
            maxTokens = Math.max(maxTokens, RECORDS.get(i).maxTokens());
        }
        Files.writeString(prompts, text);
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> cmd = new ArrayList<>(List.of(java, "--add-modules", "jdk.incubator.vector",
                "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"), Main.class.getName(),
                "generate", "--model", ReferenceRecords.model().toString(), "--tokenizer",
                ReferenceRecords.tokenizer().toString(), "--prompts", prompts.toString(), "--output", "jsonl", "--block-size", "16", "--stats-json", stats.toString()));
        cmd.addAll(List.of(remoteFlags));
        cmd.addAll(List.of("--max-tokens", String.valueOf(maxTokens)));
        Process p = new ProcessBuilder(cmd).redirectError(dir.resolve("stderr.txt").toFile()).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(Files.readString(dir.resolve("stderr.txt"))).isZero();
        return out;
    }

    /**
     * A store that cannot be reached costs one line of kvtier's on stderr that names the URL and
     * the cause once, and no line of the client's (Lettuce's and netty's warnings, with their
     * {@code 127.0.0.1/<unresolved>:port} addresses); the run still succeeds. A cluster seed is
     * the noisy case: the client's topology refresh warns for every seed it cannot reach.
     */
    @Test
    void anUnreachableStoreIsOneLineOfKvtiersOnStderr() throws IOException, InterruptedException {
        int port;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort(); // closed again: nothing listens there
        }
        String url = "redis://127.0.0.1:" + port;
        Path stats = dir.resolve("stats.json");
        List<String> lines = generate(stats, "--remote-url", url, "--remote-mode", "cluster", "--remote-timeout", "200").lines().toList();
        assertThat(lines).hasSize(LONG_PROMPTS.length);
        List<String> err = stderr();
        assertThat(err).as("stderr: kvtier's lines only (its summary and the one warning)").allMatch(l -> l.startsWith("kvtier: "))
                .noneMatch(l -> l.contains("<unresolved>") || l.contains("Exception"));
        assertThat(err.stream().filter(l -> l.contains(url))).as("stderr").containsExactly("kvtier: remote tier: cannot reach "
                + url + " (connection refused); every lookup misses until it answers");
        JsonNode remote = JSON.readTree(stats.toFile()).get("remote");
        assertThat(remote.get("breaker_state").asText()).isEqualTo("open");
        assertThat(remote.get("breaker_opens").asLong()).as("open from the start: one opening").isEqualTo(1);
        assertThat(remote.get("off_reason").isNull()).isTrue();
    }

    /**
     * A new user's trial: a server that wants a password, none given, said only the server's long
     * NOAUTH line. It now also says where a password goes; with a password given it does not.
     */
    @Test
    void noPasswordForAServerThatWantsOneSaysWhereItGoes() throws Exception {
        try (io.kvtier.tier.remote.OwnRedis r = io.kvtier.tier.remote.OwnRedis.start(dir.resolve("r"), "requirepass pw-1")) {
            assertThat(generate(dir.resolve("stats.json"), "--remote-url", r.url()).lines()).hasSize(LONG_PROMPTS.length);
            assertThat(stderr()).filteredOn(l -> l.startsWith("kvtier: remote tier off: ")).singleElement().asString()
                    .startsWith("kvtier: remote tier off: authentication failed (NOAUTH ")
                    .endsWith("): the server wants a password: give it with --remote-password-file FILE (or "
                            + RemoteConnectionOptions.PASSWORD_ENV + ")");
        }
    }

    /**
     * A new user's trial: a password given for a server that has none passed generate silently (the
     * handshake's {@code AUTH default <password>} passes a user without a password) where bench
     * offload refused it. Now the tier refuses it as bench offload does: off at the start, one line
     * saying to leave the password out, nothing written to the store.
     */
    @Test
    void aPasswordForAServerWithoutOneTurnsTheTierOffSayingToLeaveItOut() throws Exception {
        Path password = Files.writeString(dir.resolve("password"), "some-password");
        Path stats = dir.resolve("stats.json");
        try (io.kvtier.tier.remote.OwnRedis r = io.kvtier.tier.remote.OwnRedis.start(dir.resolve("r"))) {
            assertThat(generate(stats, "--remote-url", r.url(), "--remote-password-file", password.toString()).lines())
                    .hasSize(LONG_PROMPTS.length);
            assertThat(stderr()).filteredOn(l -> l.startsWith("kvtier: remote tier off: ")).containsExactly("kvtier: remote tier off: "
                    + "authentication failed (ERR AUTH <password> called without any password configured for the default user. Are you"
                    + " sure your configuration is correct?): the server has no password for user default: leave out "
                    + "--remote-password-file " + password);
            assertThat(r.cli("DBSIZE")).as("nothing stored").isEqualTo("0");
        }
        JsonNode remote = JSON.readTree(stats.toFile()).get("remote");
        assertThat(remote.get("breaker_state").asText()).isEqualTo("off");
        assertThat(remote.get("chunks_stored").asLong()).isZero();
        assertThat(String.join("\n", stderr())).doesNotContain("some-password");
    }

    /** trial10: a wrong password read "breaker off (opened 1 time)" in the summary: the tier is off, no breaker did it. */
    @Test
    void aWrongPasswordIsTierOffInTheSummaryAndTheStats() throws IOException, InterruptedException {
        String url = RedisServers.standalone().replace("redis://", "redis://nobody@"); // no such user: WRONGPASS
        Path password = dir.resolve("password");
        Files.writeString(password, "not-the-password");
        Path stats = dir.resolve("stats.json");
        assertThat(generate(stats, "--remote-url", url, "--remote-password-file", password.toString()).lines())
                .hasSize(LONG_PROMPTS.length);
        List<String> err = stderr();
        assertThat(err).contains("kvtier: remote tier off: authentication failed (WRONGPASS invalid username-password pair "
                + "or user is disabled.): the server refused the password of --remote-password-file " + password + " for the URL's "
                + "user (a wrong password, or a user that is disabled or not there)");
        assertThat(err).filteredOn(l -> l.startsWith("kvtier: remote: ")).singleElement().asString()
                .endsWith(", tier off: authentication failed");
        JsonNode remote = JSON.readTree(stats.toFile()).get("remote");
        assertThat(remote.get("breaker_state").asText()).isEqualTo("off");
        assertThat(remote.get("breaker_opens").asLong()).isZero();
        assertThat(remote.get("off_reason").asText()).startsWith("authentication failed (WRONGPASS ");
        assertThat(String.join("\n", err)).doesNotContain("not-the-password");
    }

    /**
     * On standalone and on cluster. Each process's stderr is kvtier's own lines only: a cluster
     * client's periodic topology refresh racing the client's shutdown made netty log an error with
     * a 45-frame stack at the end of a clean run (a new user's trial; Lettuce issue 2904).
     */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void aSecondProcessLoadsTheFirstOnesChunksFromRedis(boolean cluster) throws IOException, InterruptedException {
        List<String> urls = cluster ? RedisServers.cluster() : List.of(RedisServers.standalone());
        String tenant = "cli" + Long.toHexString(new Random().nextLong() & 0xffffffL);
        Path stats = dir.resolve("stats.json");
        generate(urls, cluster, tenant, stats);
        assertThat(stderr()).as("stderr of the first process").allMatch(l -> l.startsWith("kvtier: "));
        JsonNode first = JSON.readTree(stats.toFile()).get("remote");
        assertThat(first.get("chunks_stored").asLong()).isPositive();
        List<String> lines = generate(urls, cluster, tenant, stats).lines().toList();
        assertThat(stderr()).as("stderr of the second process").allMatch(l -> l.startsWith("kvtier: "));
        JsonNode second = JSON.readTree(stats.toFile()).get("remote");
        assertThat(stderr()).filteredOn(l -> l.startsWith("kvtier: remote: ")).singleElement().asString().startsWith(
                "kvtier: remote: " + Plural.count(second.get("chunks_stored").asLong(), "chunk") + " stored in " + Plural.count(second.get("writes").asLong(),
                        "write job") + ", " + second.get("chunks_loaded") + " loaded, " + Plural.count(second.get("probes").asLong(), "probe")
                        + " found " + Plural.count(second.get("chunks_probed_present").asLong(), "chunk") + " present, ");
        assertThat(second.get("chunks_probed_present").asLong()).as("every loaded chunk was probed present first")
                .isGreaterThanOrEqualTo(second.get("chunks_loaded").asLong());
        // The first process stored every full chunk of the prompts; the second loads those before each last token.
        assertThat(second.get("chunks_loaded").asLong()).isPositive().isLessThanOrEqualTo(first.get("chunks_stored").asLong());
        assertThat(second.get("load_failures").properties()).as("every cause, each 0")
                .allMatch(e -> e.getValue().asLong() == 0).hasSize(io.kvtier.offload.RemoteStats.LOAD_FAILURE_CAUSES.size());
        assertThat(lines).hasSize(LONG_PROMPTS.length);
        for (String line : lines) {
            JsonNode o = JSON.readTree(line); // in completion order: "index" is the prompt's
            int n = o.get("index").asInt();
            Record rec = RECORDS.get(LONG_PROMPTS[n]);
            // Greedy: a longer run starts with the reference's tokens.
            int[] ids = new int[Math.min(o.get("generated_ids").size(), rec.expectedOutput().length)];
            for (int j = 0; j < ids.length; j++) {
                ids[j] = o.get("generated_ids").get(j).asInt();
            }
            assertThat(ids).as("record %d", LONG_PROMPTS[n]).containsExactly(rec.expectedOutput());
            int hits = o.get("device_hit_tokens").asInt();
            for (JsonNode t : o.get("external_hit_tokens")) {
                hits += t.asInt();
            }
            // Every full chunk before the last token: from the remote tier, or from this process's device
            // or host tier when another of its prompts (sharing the prefix) loaded the same chunk first.
            assertThat(hits).as("record %d", LONG_PROMPTS[n]).isEqualTo((rec.promptIds().length - 1) / 16 * 16);
        }
    }
}

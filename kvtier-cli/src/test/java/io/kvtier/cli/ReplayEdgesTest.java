package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvtier.replay.Capacity;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Edges of {@code replay} that gave a stack trace, a wrong number or silence, and the vocabulary's rules. */
class ReplayEdgesTest {

    @TempDir
    Path dir;

    private Path trace() throws IOException {
        return TraceFiles.twoRequests(dir);
    }

    private CliRun replay(String... args) throws IOException {
        return TraceFiles.replayTwoRequests(dir, args);
    }

    private static void assertOneLineExit2(CliRun r, String... contains) {
        assertThat(r.code()).as(r.err()).isEqualTo(2);
        assertThat(r.err().strip().lines().toList()).as(r.err()).hasSize(1);
        assertThat(r.err()).contains(contains).doesNotContain("Exception", "\tat ");
    }

    @Test
    void aTinySpeedupIsRefusedInsteadOfOverflowingTheClock() throws IOException {
        assertOneLineExit2(replay("--mode", "timed", "--speedup", "1e-9"), "--speedup", "simulated time");
    }

    @Test
    void aHugeKvBytesPerTokenIsRefusedAndSizesTakeSuffixes() throws IOException {
        assertOneLineExit2(replay("--kv-bytes-per-token", "4000000000000000000"), "--kv-bytes-per-token");
        CliRun ok = replay("--kv-bytes-per-token", "64Ki", "--stats-json", dir.resolve("k.json").toString());
        assertThat(ok.code()).as(ok.err()).isZero();
        var j = new ObjectMapper().readTree(dir.resolve("k.json").toFile());
        assertThat(j.get("cost_model").get("kv_bytes_per_token").asLong()).isEqualTo(65536);
        assertThat(j.get("bytes_stored").asLong()).isPositive();
    }

    @Test
    void anUnsortedTraceIsRefusedNamingFileLineAndField() throws IOException {
        Path t = TraceFiles.write(dir, TraceFiles.request(500, 600, 5, 0, 1), TraceFiles.request(100, 600, 5, 0, 2));
        assertOneLineExit2(CliRun.of("replay", "--trace", t.toString()), t.getFileName() + ":2: field 'timestamp'", "sorted");
    }

    @Test
    void anEmptyOrNonUtf8TraceSaysWhatIsWrongWithTheFile() throws IOException {
        assertOneLineExit2(CliRun.of("replay", "--trace", "/dev/null"), "--trace /dev/null: no requests in the file");
        Path bad = dir.resolve("bad.jsonl");
        Files.write(bad, new byte[] {'\n', (byte) 0xff, (byte) 0xfe, '\n'});
        assertOneLineExit2(CliRun.of("replay", "--trace", bad.toString()), "bad.jsonl:1: field '(line)': is not valid UTF-8 text (on this line or a later one)");
    }

    @Test
    void flagsThatNeedAnotherAreRefusedNotIgnored() throws IOException {
        assertOneLineExit2(replay("--png", dir.resolve("x.png").toString()), "--png needs --sweep");
        assertOneLineExit2(replay("--sweep-threads", "2"), "--sweep-threads needs --sweep");
        assertOneLineExit2(replay("--speedup", "2"), "--speedup needs --mode timed");
        assertOneLineExit2(replay("--remote-gbps", "5"), "--remote-gbps needs a remote tier (--remote-cache-tokens > 0)");
        assertOneLineExit2(replay("--remote-latency-us", "5", "--remote-cache-tokens", "0k"), "--remote-latency-us needs a remote tier");
        assertOneLineExit2(replay("--load-policy", "faster", "--host-cache-tokens", "0"), "--load-policy needs the host tier");
        assertOneLineExit2(replay("--store-horizon", "4"), "--store-horizon needs --store-policy lazy");
        assertThat(dir.resolve("x.png")).doesNotExist();
    }

    /** A new user's trial: with no host tier there is nothing to evict, and no host link to time; each was ignored. */
    @Test
    void hostTierFlagsWithTheHostTierOffAreRefused() throws IOException {
        assertOneLineExit2(replay("--eviction", "lru", "--host-cache-tokens", "0"),
                "--eviction needs the host tier (--host-cache-tokens > 0)");
        assertFormerNameRefused(replay("--policy", "arc", "--host-cache-tokens", "0k"),
                "kvtier: --policy needs the host tier (--host-cache-tokens > 0)");
        assertOneLineExit2(replay("--host-gbps", "10", "--host-cache-tokens", "0"), "--host-gbps needs the host tier (--host-cache-tokens > 0)");
        assertOneLineExit2(replay("--host-latency-us", "3", "--host-cache-tokens", "0"),
                "--host-latency-us needs the host tier (--host-cache-tokens > 0)");
        // The default's name asks for what replay does anyway: not an error.
        CliRun dflt = replay("--eviction", "duel", "--host-cache-tokens", "0");
        assertThat(dflt.code()).as(dflt.err()).isZero();
    }

    /**
     * --sweep replays every policy at its own capacities: an --eviction or --host-cache-tokens beside it was ignored.
     * The chart goes to the test's directory: a sweep that ran (the refusal missing) wrote its default
     * sweep-trace*.png into the module's directory.
     */
    @Test
    void sweepRefusesThePolicyAndCapacityItSetsItself() throws IOException {
        String why = " has no effect with --sweep: it replays lru, arc, lru-admit2, lhd and duel at each --sweep-host-cache-tokens";
        Path png = dir.resolve("sweep.png");
        assertOneLineExit2(replay("--sweep", "--png", png.toString(), "--eviction", "lru"), "kvtier: --eviction" + why);
        assertOneLineExit2(replay("--sweep", "--png", png.toString(), "--host-cache-tokens", "1M"), "kvtier: --host-cache-tokens" + why);
        assertFormerNameRefused(replay("--sweep", "--png", png.toString(), "--host-tokens", "1M"), "kvtier: --host-tokens" + why);
        assertThat(png).as("refused before any replay").doesNotExist();
    }

    /** A former spelling refused as its replacement is: its deprecation note, then the one line of the refusal, exit 2. */
    private static void assertFormerNameRefused(CliRun r, String refusal) {
        assertThat(r.code()).as(r.err()).isEqualTo(2);
        assertThat(r.err().strip().lines().toList()).as(r.err()).hasSize(2);
        assertThat(r.err().strip().lines().toList().getFirst()).contains("is deprecated");
        assertThat(r.err().strip().lines().toList().getLast()).isEqualTo(refusal);
    }

    @Test
    void formerNamesStillWorkWithANoteAndNotBesideTheirReplacement() throws IOException {
        Path json = dir.resolve("old.json");
        CliRun old = replay("--policy", "arc", "--json", json.toString(), "--host-tokens", "1024", "--requests", "0");
        assertThat(old.code()).as(old.err()).isZero();
        assertThat(old.err()).contains("--policy is deprecated", "use --eviction", "--json is deprecated",
                "--host-tokens is deprecated", "--requests 0 for the default is deprecated");
        var j = new ObjectMapper().readTree(json.toFile());
        assertThat(j.get("eviction").asText()).isEqualTo("arc");
        assertThat(j.has("policy")).isFalse();
        assertThat(j.get("host_tokens").asLong()).isEqualTo(1024);
        assertThat(j.get("requests").asInt()).isEqualTo(2);
        assertOneLineExit2(replay("--policy", "arc", "--eviction", "lru"), "give --eviction or its former name --policy");
        CliRun bench = CliRun.of("bench", "scheduler", "--running", "4", "--prompt-tokens", "16", "--steps", "5", "--repeats", "1");
        assertThat(bench.code()).as(bench.err()).isZero();
        assertThat(bench.out()).contains("4 running requests");
        assertThat(bench.err()).contains("--running is deprecated", "use --max-running");
    }

    @Test
    void maxTokensCapsTheTraceOutputs() throws IOException {
        Path json = dir.resolve("m.json");
        CliRun r = replay("--mode", "timed", "--max-tokens", "3", "--stats-json", json.toString());
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(new ObjectMapper().readTree(json.toFile()).get("output_tokens").asLong()).isEqualTo(6);
        CliRun first = replay("--mode", "timed", "--outputs", "first", "--stats-json", json.toString());
        assertThat(first.code()).as(first.err()).isZero();
        assertThat(new ObjectMapper().readTree(json.toFile()).get("output_tokens").asLong()).isEqualTo(2);
    }

    /** Bytes: K/M/G and Ki/Mi/Gi are all powers of 1024. Tokens: k/M/G powers of 1000, Ki/Mi/Gi of 1024. */
    @Test
    void oneRuleForSizes() {
        assertThat(Sizes.parseBytes("1M", "--x")).isEqualTo(1L << 20);
        assertThat(Sizes.parseBytes("1Mi", "--x")).isEqualTo(1L << 20);
        assertThat(Sizes.parseBytes("1MiB", "--x")).isEqualTo(1L << 20);
        assertThat(Sizes.parseBytes("1.5G", "--x")).isEqualTo(3L << 29);
        assertThat(Sizes.parseBytes("4096", "--x")).isEqualTo(4096);
        for (String plain : new String[] {"1.5", "1.0", "1.0B"}) {
            assertThatThrownBy(() -> Sizes.parseBytes(plain, "--host-cache-bytes")).as("no decimal point without a unit: %s", plain)
                    .isInstanceOf(BadInputException.class)
                    .hasMessage("--host-cache-bytes: '" + plain + "' is not a whole number of bytes (e.g. 4096, 256M, 1.5G)");
        }
        assertThat(Sizes.parseBytes("1.0K", "--x")).isEqualTo(1024);
        assertThat(Capacity.parse("1M", "--x").tokens()).isEqualTo(1_000_000);
        assertThat(Capacity.parse("1Mi", "--x").tokens()).isEqualTo(1L << 20);
    }
}

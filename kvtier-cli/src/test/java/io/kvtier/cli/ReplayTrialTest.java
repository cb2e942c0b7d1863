package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A new user's trial of {@code replay} (trial 25): each value that was accepted wrongly, or refused in wrong words. */
class ReplayTrialTest {

    @TempDir
    Path dir;

    private static void assertOneLineExit2(CliRun r, String line) {
        assertThat(r.code()).as(r.err()).isEqualTo(2);
        assertThat(r.err().strip().lines().toList()).as(r.err()).containsExactly(line);
    }

    /** 'inf' is a capacity elsewhere, but no point on a sweep's axis: said so, and not offered for a typo. */
    @Test
    void aSweepRefusesInfInItsOwnWords() throws IOException {
        Path png = dir.resolve("s.png");
        assertOneLineExit2(TraceFiles.replayTwoRequests(dir, "--sweep", "--png", png.toString(), "--sweep-host-cache-tokens", "2M,1M,inf"),
                "kvtier: --sweep-host-cache-tokens: 'inf' is not allowed in a sweep: it takes numbers of tokens "
                        + "(the chart's ceiling is the unbounded host)");
        assertOneLineExit2(TraceFiles.replayTwoRequests(dir, "--sweep", "--png", png.toString(), "--sweep-host-cache-tokens", "abc"),
                "kvtier: --sweep-host-cache-tokens: 'abc' is not a count of tokens (e.g. 4096, 4k, 4Ki, 1M)");
        assertOneLineExit2(TraceFiles.replayTwoRequests(dir, "--sweep", "--png", png.toString(), "--sweep-host-cache-tokens", "100"),
                "kvtier: --sweep-host-cache-tokens: '100' is less than one block (512 tokens)");
        // Where inf is a capacity, the typo's line still offers it.
        assertOneLineExit2(TraceFiles.replayTwoRequests(dir, "--host-cache-tokens", "abc"),
                "kvtier: --host-cache-tokens: 'abc' is not a count of tokens (e.g. 4096, 4k, 4Ki, 1M, inf)");
        // Picocli's split dropped a trailing empty item: "2M,1M," was a sweep of two.
        assertOneLineExit2(TraceFiles.replayTwoRequests(dir, "--sweep", "--png", png.toString(), "--sweep-host-cache-tokens", "2M,1M,"),
                "kvtier: --sweep-host-cache-tokens: '' is not a count of tokens (e.g. 4096, 4k, 4Ki, 1M)");
        // A capacity below one token ran as capacity 0.
        assertOneLineExit2(TraceFiles.replayTwoRequests(dir, "--host-cache-tokens", "0.0001k"),
                "kvtier: --host-cache-tokens: '0.0001k' is 0.1 tokens, not a whole number");
        assertThat(png).doesNotExist();
    }

    /** Two outputs on one file: the second write replaced the first (F held only the CSV). Real paths compared. */
    @Test
    void twoOutputsOrAnOutputOverTheTraceAreRefused() throws IOException {
        Path f = dir.resolve("out");
        assertOneLineExit2(TraceFiles.replayTwoRequests(dir, "--stats-json", f.toString(), "--stats-csv", dir.resolve(".").resolve("out").toString()),
                "kvtier: --stats-json and --stats-csv name one file (" + dir.resolve(".").resolve("out") + "): give each its own");
        java.nio.file.Files.writeString(f, "kept");
        Path link = java.nio.file.Files.createSymbolicLink(dir.resolve("link"), f);
        assertOneLineExit2(TraceFiles.replayTwoRequests(dir, "--sweep", "--png", f.toString(), "--stats-json", link.toString()),
                "kvtier: --stats-json and --png name one file (" + f + "): give each its own");
        Path t = TraceFiles.twoRequests(dir);
        String before = java.nio.file.Files.readString(t);
        CliRun overTrace = CliRun.of("replay", "--trace", t.toString(), "--stats-csv", t.toString());
        assertOneLineExit2(overTrace, "kvtier: --trace and --stats-csv name one file (" + t + "): give each its own");
        assertThat(java.nio.file.Files.readString(t)).isEqualTo(before);
        assertThat(java.nio.file.Files.readString(f)).isEqualTo("kept");
        // generate's pair, refused before the model is looked for.
        CliRun gen = CliRun.of("generate", "--model", dir.resolve("none.bin").toString(), "--prompt", "x",
                "--stats-json", f.toString(), "--stats-csv", f.toString());
        assertOneLineExit2(gen, "kvtier: --stats-json and --stats-csv name one file (" + f + "): give each its own");
    }

    /** A hard link has its own real path: the CSV replaced the trace it names. Existing files compared by identity. */
    @Test
    void anOutputOnAHardLinkToTheInputIsRefused() throws IOException {
        Path t = TraceFiles.twoRequests(dir);
        String before = java.nio.file.Files.readString(t);
        Path hard = java.nio.file.Files.createLink(dir.resolve("hard.jsonl"), t);
        assertOneLineExit2(CliRun.of("replay", "--trace", t.toString(), "--stats-csv", hard.toString()),
                "kvtier: --trace and --stats-csv name one file (" + hard + "): give each its own");
        assertThat(java.nio.file.Files.readString(t)).isEqualTo(before);
        Path prompts = java.nio.file.Files.writeString(dir.resolve("pp.txt"), "Once\n");
        Path ppHard = java.nio.file.Files.createLink(dir.resolve("pphard.txt"), prompts);
        CliRun gen = CliRun.of("generate", "--model", dir.resolve("none.bin").toString(), "--prompts", prompts.toString(),
                "--stats-json", ppHard.toString());
        assertOneLineExit2(gen, "kvtier: --prompts and --stats-json name one file (" + ppHard + "): give each its own");
        assertThat(java.nio.file.Files.readString(prompts)).isEqualTo("Once\n");
        // Two names of files not yet written are still told apart.
        CliRun apart = TraceFiles.replayTwoRequests(dir, "--stats-json", dir.resolve("a.json").toString(),
                "--stats-csv", dir.resolve("a.csv").toString());
        assertThat(apart.code()).as(apart.err()).isZero();
    }

    /** '10M' was "not a whole number" though the help says "at most 10M": parsed as the other token counts are. */
    @Test
    void theContextTakesTokenSuffixes() throws IOException {
        java.util.Map<String, Integer> given = java.util.Map.of("10M", 10_000_000, "1M", 1_000_000, "1Mi", 1_048_576, "128k", 128_000);
        for (var e : given.entrySet()) {
            Path json = dir.resolve("c.json");
            CliRun r = TraceFiles.replayTwoRequests(dir, "--context-tokens", e.getKey(), "--stats-json", json.toString());
            assertThat(r.code()).as(r.err()).isZero();
            assertThat(new com.fasterxml.jackson.databind.ObjectMapper().readTree(json.toFile()).findValue("context_tokens").asInt())
                    .as(e.getKey()).isEqualTo(e.getValue());
        }
        assertOneLineExit2(TraceFiles.replayTwoRequests(dir, "--context-tokens", "11M"),
                "kvtier: --context-tokens must be at most 10,000,000 (Llama 4 Scout's, the longest of a released model), got 11,000,000");
        assertOneLineExit2(TraceFiles.replayTwoRequests(dir, "--context-tokens", "inf"),
                "kvtier: --context-tokens: 'inf' is not a number of tokens (e.g. 1M, 131072, 128k, 1Mi)");
        assertOneLineExit2(TraceFiles.replayTwoRequests(dir, "--context-tokens", "0"), "kvtier: --context-tokens must be at least 1, got 0");
    }

    /** The timed mode's default device tier was named "--device-tokens 448k", a flag not given. */
    @Test
    void aDeviceTierTooSmallIsNamedAsGiven() throws IOException {
        Path t = TraceFiles.write(dir, TraceFiles.request(0, 600, 9_999_000, 0, 1), TraceFiles.request(100_000, 600, 5, 0, 1));
        assertOneLineExit2(CliRun.of("replay", "--trace", t.toString(), "--mode", "timed"),
                "kvtier: the default device tier (448k tokens, 875 blocks of 512 tokens) is smaller than the trace's longest request "
                        + "needs (19,531 blocks, 9,999,872 tokens); give --device-tokens 9999872 or more, or min");
        assertOneLineExit2(CliRun.of("replay", "--trace", t.toString(), "--mode", "timed", "--device-tokens", "448k"),
                "kvtier: --device-tokens 448k holds 875 blocks of 512 tokens, but the trace's longest request needs 19,531 "
                        + "(9,999,872 tokens); give --device-tokens 9999872 or more, or min");
    }

    /** "all of its 1 request" read as the whole trace of 2: from --from-request on, said so. */
    @Test
    void fewerRequestsThanAskedFromARequestOnAreSaidSo() throws IOException {
        CliRun r = TraceFiles.replayTwoRequests(dir, "--from-request", "1", "--requests", "5");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out().lines().findFirst().orElseThrow()).contains(
                " from request 1 (1 request from there on: --requests 5 asked for more): 1 request,");
        CliRun all = TraceFiles.replayTwoRequests(dir, "--requests", "5");
        assertThat(all.out().lines().findFirst().orElseThrow()).contains(" (all of its 2 requests: --requests 5 asked for more): 2 requests,");
    }

    /**
     * 2^31 output tokens simulated silently for hours; 'min' (the timed mode's advice) led into the same.
     * A request longer than a replay's longest context is refused naming its line and field.
     */
    @Test
    void aRequestBeyondTheLongestContextIsRefusedNamingItsLine() throws IOException {
        Path t = TraceFiles.write(dir, TraceFiles.request(0, 600, 5, 0, 1), TraceFiles.request(0, 10, Integer.MAX_VALUE, 1));
        String line = "kvtier: " + t + ":2: field 'output_length': 10 prompt + 2,147,483,647 output tokens = 2,147,483,657 "
                + "exceed the longest context a replay simulates (10,000,000 tokens, Llama 4 Scout's); give --max-tokens 9999990 or less";
        assertOneLineExit2(CliRun.of("replay", "--trace", t.toString(), "--max-tokens", String.valueOf(Integer.MAX_VALUE)), line);
        assertOneLineExit2(CliRun.of("replay", "--trace", t.toString(), "--mode", "timed"), line);
        assertOneLineExit2(CliRun.of("replay", "--trace", t.toString(), "--mode", "timed", "--device-tokens", "min"), line);
        Path big = TraceFiles.write(dir, "{\"timestamp\": 0, \"input_length\": 10000000, \"output_length\": 0, \"hash_ids\": ["
                + "0, ".repeat(19531) + "0]}");
        assertOneLineExit2(CliRun.of("replay", "--trace", big.toString()), "kvtier: " + big + ":1: field 'input_length': "
                + "10,000,000 prompt tokens and the first output token exceed the longest context a replay simulates "
                + "(10,000,000 tokens, Llama 4 Scout's)");
        assertOneLineExit2(TraceFiles.replayTwoRequests(dir, "--context-tokens", "10000001"),
                "kvtier: --context-tokens must be at most 10,000,000 (Llama 4 Scout's, the longest of a released model), got 10,000,001");
        // The output the replay generates is what counts: capped, the line replays.
        CliRun capped = CliRun.of("replay", "--trace", t.toString(), "--mode", "timed", "--max-tokens", "3");
        assertThat(capped.code()).as(capped.err()).isZero();
        assertThat(capped.out()).contains("2 requests");
    }

    /** A prompt of no full block: the ceiling is 0 and the fractions were NaN. One request: "1 requests". */
    @Test
    void aTraceOfNoFullBlockSaysNaNInWords() throws IOException {
        Path t = TraceFiles.write(dir, TraceFiles.request(0, 10, 0, 1));
        CliRun r = CliRun.of("replay", "--trace", t.toString());
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).contains(": 1 request, 10 prompt tokens;",
                "ceiling (unbounded cache): 0.0000; optimum/ceiling and policy/ceiling n/a (no full prompt block recurs)")
                .doesNotContain("NaN");
        // output_length 0 still generates the token the prefill samples: said on the line.
        CliRun timed = CliRun.of("replay", "--trace", t.toString(), "--mode", "timed");
        assertThat(timed.code()).as(timed.err()).isZero();
        assertThat(timed.out()).contains("1 output token (at least 1 a request: the prefill samples the first)");
    }

    @Test
    void moreRequestsAskedThanTheTraceHasIsSaid() throws IOException {
        CliRun r = TraceFiles.replayTwoRequests(dir, "--requests", "100");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).contains(" (all of its 2 requests: --requests 100 asked for more): 2 requests,");
    }
}

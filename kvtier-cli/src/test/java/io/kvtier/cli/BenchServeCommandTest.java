package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bench serve} end to end on stories260K with a small load: both sides run every request,
 * the table has the latency rows and the ratio column, the chart is a PNG; bad input exits 2.
 */
class BenchServeCommandTest {

    @Test
    void comparesTheHostTierOffAndOnAndDrawsTheChart(@TempDir Path dir) throws Exception {
        Path png = dir.resolve("serve.png");
        CliRun r = CliRun.of("bench", "serve", "--conversations", "2", "--turns", "2", "--system-tokens", "40",
                "--user-tokens", "8", "--max-tokens", "4", "--threads", "2", "--png", png.toString());
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).contains("host tier off", "host tier on", "on vs off", "TTFT p50 (ms)", "TTFT p99 (ms)",
                "inter-token p90 (ms)", "end-to-end p99 (ms)", "generated tokens/s", "cached prompt tokens");
        assertThat(r.out()).containsPattern("(?m)^requests +4 +4 *$");
        // The header says each side's scheduler: prefill priority follows the host tier by default.
        assertThat(r.out()).containsPattern("(?m)^  host tier off: no offloading; prefill priority off \\(FIFO admission\\)$")
                .containsPattern("(?m)^  host tier on: .*; prefill priority on \\(new requests' prefills preempt decodes\\)$");
        // Every numeric row's last column says which way the 'on' side differs, or "-" for a zero.
        assertThat(r.out()).containsPattern("(?m)^TTFT p50 \\(ms\\) .* (\\d+\\.\\d\\dx (lower|higher)|equal|-)$")
                .containsPattern("(?m)^generated tokens/s .* (\\d+\\.\\d\\dx (lower|higher)|equal|-)$");
        // 2 conversations x 2 turns, prompts of 40 + 8 per turn + earlier answers: the prompt tokens of both sides.
        assertThat(r.out()).containsPattern("(?m)^prompt tokens +(\\d+) +\\1 *$");
        byte[] head = Files.readAllBytes(png);
        assertThat(head).startsWith(0x89, 'P', 'N', 'G');
    }

    @Test
    void theRatioColumnSaysWhichWayAndNeverDividesZeros() {
        assertThat(ServeBenchReport.ratio(3068, 385)).isEqualTo("7.97x lower");
        assertThat(ServeBenchReport.ratio(100, 110)).isEqualTo("1.10x higher");
        assertThat(ServeBenchReport.ratio(5, 5)).isEqualTo("equal");
        assertThat(ServeBenchReport.ratio(0, 0)).isEqualTo("-");
        assertThat(ServeBenchReport.ratio(0.04, 0)).isEqualTo("-");
        assertThat(ServeBenchReport.ratio(Double.NaN, 1)).isEqualTo("-");
        // A value under 0.1 shows its digits instead of 0.0.
        assertThat(ServeBenchReport.fmt(0.0437)).isEqualTo("0.0437");
        assertThat(ServeBenchReport.fmt(0)).isEqualTo("0");
        assertThat(ServeBenchReport.fmt(3.14159)).isEqualTo("3.14");
        assertThat(ServeBenchReport.fmt(38.84)).isEqualTo("38.8");
        assertThat(ServeBenchReport.fmt(3068.4)).isEqualTo("3068");
    }

    @Test
    void serverRowsAreThisRunsGrowthOfTheCounters() {
        String before = "# TYPE vllm:num_preemptions_total counter\nvllm:num_preemptions_total 3.0\n"
                + "vllm:kv_offload_total_bytes_total{transfer_type=\"CPU_to_GPU\"} 1000.0\n"
                + "vllm:kv_offload_total_bytes_total{transfer_type=\"GPU_to_CPU\"} 50.0\n";
        String after = "vllm:num_preemptions_total 6.0\n"
                + "vllm:kv_offload_total_bytes_total{transfer_type=\"CPU_to_GPU\"} 4096.0\n"
                + "vllm:kv_offload_total_bytes_total{transfer_type=\"GPU_to_CPU\"} 70.0\n";
        ServeBenchReport.Side side = new ServeBenchReport.Side("server", null, before, after);
        assertThat(ServeBenchReport.metricDelta(side, "vllm:num_preemptions_total")).isEqualTo("3");
        assertThat(ServeBenchReport.metricDelta(side, "vllm:kv_offload_total_bytes_total", "transfer_type=\"CPU_to_GPU\"")).isEqualTo("3096");
        assertThat(ServeBenchReport.metricDelta(side, "vllm:no_such_metric")).isEqualTo("-");
        // A server without /metrics before (none scraped) shows the whole count after.
        assertThat(ServeBenchReport.metricDelta(new ServeBenchReport.Side("s", null, "", after), "vllm:num_preemptions_total")).isEqualTo("6");
    }

    /**
     * A new user's trial: --user-tokens 2G overflowed int ("longest request -1179868704 prompt tokens", then
     * "device blocks must be at least 1"). Counted in long, it is the context's refusal that 100M gets.
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.CsvSource({"--user-tokens, 2G, 16000000512", "--user-tokens, 300M, 2400000512",
        "--max-tokens, 2G, 16000000512", "--max-tokens, 300M, 2400000512"})
    void aLoadBeyondAnIntIsTheContextsRefusal(String flag, String value, long needed) {
        CliRun r = CliRun.of("bench", "serve", flag, value);
        assertThat(r.code()).as(r.err()).isEqualTo(2);
        assertThat(r.err().strip()).isEqualTo("kvtier: the last turn needs " + needed + " positions but the model's context is 512; "
                + "lower --turns, --system-tokens, --user-tokens or --max-tokens");
        assertThat(r.out()).isEmpty();
        ServeLoad load = new ServeLoad(16, 8, 256, 2_000_000_000, 64, io.kvtier.engine.SamplingParams.GREEDY);
        assertThat(load.longestPromptTokens()).isEqualTo(256 + 8 * 2_000_000_000L + 7 * 64);
        assertThat(load.historyTokens()).isEqualTo(256 + 16 * 8 * 2_000_000_064L);
    }

    @Test
    void userMessagesOfEachConversationAndTurnDifferInTheirFirstWords() {
        java.util.Set<String> openings = new java.util.HashSet<>();
        for (int conv = 0; conv < 12; conv++) {
            for (int turn = 0; turn < 3; turn++) {
                String m = ServeLoad.userMessage(new java.util.SplittableRandom(7), conv, turn, 4);
                openings.add(m.substring(0, m.indexOf(':')));
            }
        }
        assertThat(openings).hasSize(36);
    }

    @Test
    void badInputExitsTwoWithOneLine() {
        CliRun zero = CliRun.of("bench", "serve", "--turns", "0");
        assertThat(zero.code()).isEqualTo(2);
        assertThat(zero.err()).contains("--turns");
        CliRun tooLong = CliRun.of("bench", "serve", "--system-tokens", "600");
        assertThat(tooLong.code()).isEqualTo(2);
        assertThat(tooLong.err()).contains("context is 512");
        CliRun nobody = CliRun.of("bench", "serve", "--url", "http://127.0.0.1:1");
        assertThat(nobody.code()).isEqualTo(2);
        assertThat(nobody.err().strip()).isEqualTo("kvtier: --url http://127.0.0.1:1: cannot reach the server (connection refused)");
        CliRun notAUrl = CliRun.of("bench", "serve", "--url", "notaurl");
        assertThat(notAUrl.code()).isEqualTo(2);
        assertThat(notAUrl.err().strip()).isEqualTo(
                "kvtier: --url notaurl: not an http:// or https:// URL with a host; give e.g. http://127.0.0.1:8000");
        // Refused before the bench runs (the whole bench took minutes before the chart failed to save).
        CliRun noDir = CliRun.of("bench", "serve", "--png", "/nonexistent/dir/x.png");
        assertThat(noDir.code()).isEqualTo(2);
        assertThat(noDir.err().strip()).isEqualTo("kvtier: --png /nonexistent/dir/x.png: the directory /nonexistent/dir does not exist");
        assertThat(noDir.out()).isEmpty();
    }

    /**
     * With --url the context comes from the server's /v1/models ({@code max_model_len}): a load that
     * cannot fit is one line before any output, not a run of 400s. The server here is a fake that
     * only lists a model (the check needs nothing else).
     */
    @Test
    void aRunningServersContextIsCheckedBeforeTheRun() throws Exception {
        contextRefusedAt("");
    }

    /**
     * A new user's trial: the OpenAI clients' base URL ({@code http://h:p/v1}) built
     * {@code /v1/v1/models} (a 404 here). It names the same server: the fake, which only has
     * {@code /v1/models}, answers and its context is checked.
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"/", "/v1", "/v1/"})
    void theOpenAiBaseUrlNamesTheSameServer(String suffix) throws Exception {
        contextRefusedAt(suffix);
    }

    /** bench serve --url (fake server's root + {@code suffix}) refuses a load beyond the listed context of 512. */
    private static void contextRefusedAt(String suffix) throws Exception {
        com.sun.net.httpserver.HttpServer fake = com.sun.net.httpserver.HttpServer.create(
                new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0), 0);
        fake.createContext("/v1/models", ex -> {
            boolean exact = ex.getRequestURI().getPath().equals("/v1/models"); // not a route under it (/v1/models/x)
            byte[] body = (exact ? "{\"object\":\"list\",\"data\":[{\"id\":\"small\",\"object\":\"model\",\"max_model_len\":512}]}"
                    : "{}").getBytes(java.nio.charset.StandardCharsets.UTF_8);
            ex.sendResponseHeaders(exact ? 200 : 404, body.length);
            ex.getResponseBody().write(body);
            ex.close();
        });
        fake.start();
        try {
            String url = "http://127.0.0.1:" + fake.getAddress().getPort();
            CliRun r = CliRun.of("bench", "serve", "--url", url + suffix);
            assertThat(r.code()).as(r.err()).isEqualTo(2);
            assertThat(r.err().strip()).isEqualTo("kvtier: the last turn needs 768 positions but " + url
                    + " serves small with a context of 512; lower --turns, --system-tokens, --user-tokens or --max-tokens");
            assertThat(r.out()).isEmpty();
        } finally {
            fake.stop(0);
        }
    }

    @Test
    void theServersRootIsTheUrlWithoutATrailingSlashOrV1() {
        assertThat(BenchServeCommand.serverRoot("http://h:8000")).isEqualTo("http://h:8000");
        assertThat(BenchServeCommand.serverRoot("http://h:8000/")).isEqualTo("http://h:8000");
        assertThat(BenchServeCommand.serverRoot("http://h:8000/v1")).isEqualTo("http://h:8000");
        assertThat(BenchServeCommand.serverRoot("http://h:8000/v1/")).isEqualTo("http://h:8000");
        assertThat(BenchServeCommand.serverRoot("https://h/proxy/v1")).isEqualTo("https://h/proxy");
        assertThat(BenchServeCommand.serverRoot("http://h:8000/v10")).isEqualTo("http://h:8000/v10");
    }

    /**
     * trial21: a server that requires an API key could not be benchmarked (401, no flag for it).
     * The fake answers each route only with {@code Bearer k1}; its completions route answers 418
     * with a marker, so the run's one line shows every request carried the key.
     */
    @Test
    void aRunningServersApiKeyIsSentOnEveryRequest(@TempDir Path dir) throws Exception {
        com.sun.net.httpserver.HttpServer fake = com.sun.net.httpserver.HttpServer.create(
                new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0), 0);
        java.util.Map<String, String> bodies = java.util.Map.of(
                "/v1/models", "{\"object\":\"list\",\"data\":[{\"id\":\"m\",\"object\":\"model\",\"max_model_len\":4096}]}",
                "/tokenize", "{\"tokens\":[1,5,6,7]}",
                "/v1/completions", "reached with the key");
        bodies.forEach((route, text) -> fake.createContext(route, ex -> {
            boolean keyed = "Bearer k1".equals(ex.getRequestHeaders().getFirst("Authorization"));
            byte[] body = (keyed ? text : "{\"error\":{\"message\":\"no key\"}}").getBytes(java.nio.charset.StandardCharsets.UTF_8);
            ex.sendResponseHeaders(!keyed ? 401 : route.equals("/v1/completions") ? 418 : 200, body.length);
            ex.getResponseBody().write(body);
            ex.close();
        }));
        fake.start();
        try {
            String url = "http://127.0.0.1:" + fake.getAddress().getPort();
            CliRun none = CliRun.of("bench", "serve", "--url", url);
            assertThat(none.code()).as(none.err()).isEqualTo(2);
            assertThat(none.err().strip()).isEqualTo("kvtier: bench serve: GET " + url + "/v1/models answered 401: the server"
                    + " requires an API key; give it with --api-key-file, --api-key-env or --api-key");
            CliRun wrong = CliRun.of("bench", "serve", "--url", url, "--api-key", "k2");
            assertThat(wrong.err().strip()).isEqualTo("kvtier: bench serve: GET " + url + "/v1/models answered 401: the server"
                    + " refused the API key given");
            Path keyFile = java.nio.file.Files.writeString(dir.resolve("key"), "k1\n");
            CliRun keyed = CliRun.of("bench", "serve", "--url", url, "--api-key-file", keyFile.toString(), "--conversations", "1",
                    "--turns", "1", "--system-tokens", "4", "--user-tokens", "4", "--max-tokens", "2");
            assertThat(keyed.code()).as(keyed.err()).isEqualTo(2);
            assertThat(keyed.err().strip()).isEqualTo("kvtier: bench serve: /v1/completions answered 418: reached with the key");
        } finally {
            fake.stop(0);
        }
        CliRun noUrl = CliRun.of("bench", "serve", "--api-key", "k1");
        assertThat(noUrl.err().strip()).isEqualTo("kvtier: --api-key needs --url");
    }

    /** Every GGUF architecture opens as serve opens it (the GGUF magic was read as a llama2.c header: exit 2). */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"llama-spm512-q8_0.gguf", "qwen2-bpe-q8_0.gguf", "gemma3-spm515-f32.gguf"})
    void runsOnGgufModels(String file) {
        Path model = io.kvtier.engine.ReferenceRecords.shared().resolve("models/gguf-ref/" + file);
        CliRun r = CliRun.of("bench", "serve", "--model", model.toString(), "--conversations", "1", "--turns", "1",
                "--max-tokens", "2", "--system-tokens", "16", "--user-tokens", "8", "--threads", "1");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).contains("servers: " + file).containsPattern("(?m)^requests +1 +1 *$");
    }

    @Test
    void flagsOfTheServersItStartsAreRefusedWithUrl() {
        // Each configures a server bench serve starts; a running server at --url ignores them.
        for (String[] flag : List.of(new String[] {"--host-cache-bytes", "2G"}, new String[] {"--eviction", "arc"},
                new String[] {"--disk-cache-dir", "/tmp/x"}, new String[] {"--device-blocks", "64"},
                new String[] {"--max-batch-tokens", "256"}, new String[] {"--threads", "1"}, new String[] {"--model", "/tmp/m.bin"},
                new String[] {"--offload-decode"}, new String[] {"--batch-invariant"}, new String[] {"--prefill-priority", "off"},
                new String[] {"--store-policy", "lazy"}, new String[] {"--disk-cache-bytes", "2G"})) {
            List<String> args = new java.util.ArrayList<>(List.of("bench", "serve", "--url", "http://127.0.0.1:1"));
            args.addAll(List.of(flag));
            CliRun r = CliRun.of(args.toArray(String[]::new));
            assertThat(r.code()).as(r.err()).isEqualTo(2);
            assertThat(r.err().strip()).isEqualTo("kvtier: " + flag[0]
                    + " has no effect with --url: it configures the servers bench serve starts, not a running one");
        }
    }

    /**
     * The flags that apply to a running server are the load's own, the key and the sampling: every
     * other flag of the command is refused with --url (a flag added later too, until it is said to
     * apply).
     */
    @Test
    void everyFlagButTheLoadsIsAServerFlag() {
        BenchServeCommand cmd = new BenchServeCommand();
        new picocli.CommandLine(cmd);
        List<String> server = cmd.serverFlags();
        assertThat(server).contains("--batch-invariant", "--model", "--tokenizer", "--threads", "--host-cache-bytes",
                "--eviction", "--disk-cache-dir", "--device-blocks", "--max-running", "--prefill-priority");
        assertThat(server).doesNotContain("--url", "--served-model-name", "--conversations", "--turns", "--system-tokens",
                "--user-tokens", "--png", "--max-tokens", "--temperature", "--top-p", "--seed", "--api-key", "--api-key-file",
                "--api-key-env", "--help", "--version");
    }

    /** The name sent to a running server means nothing to the servers bench serve starts itself: refused, not ignored. */
    @Test
    void servedModelNameNeedsUrl() {
        CliRun r = CliRun.of("bench", "serve", "--served-model-name", "m");
        assertThat(r.code()).as(r.err()).isEqualTo(2);
        assertThat(r.err()).isEqualTo("kvtier: --served-model-name needs --url" + System.lineSeparator());
        assertThat(r.out()).isEmpty();
    }
}

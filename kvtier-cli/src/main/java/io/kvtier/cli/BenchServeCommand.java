package io.kvtier.cli;

import io.kvtier.model.Checkpoint;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code ./kvtier bench serve}: multi-turn conversations against a server, TTFT, inter-token and
 * end-to-end latency percentiles, throughput and cached tokens; with the host tier off and on side
 * by side when it starts the servers itself.
 */
@Command(name = "serve", mixinStandardHelpOptions = true,
        description = "Load a server with concurrent multi-turn conversations; compare the host tier off and on.")
final class BenchServeCommand implements Callable<Integer> {

    @Option(names = "--url", paramLabel = "URL", description = "a running server (e.g. http://127.0.0.1:8000); "
            + "default: start one with the host tier off, then one with it on, and compare")
    String url;

    @Option(names = "--served-model", defaultValue = "", paramLabel = "NAME",
            description = "with --url: the model name to send (default: the first of GET /v1/models)")
    String servedModel;

    @Option(names = "--model", paramLabel = "FILE", description = "llama2.c checkpoint for the servers it starts (default: stories260K)")
    Path model;

    @Option(names = "--tokenizer", paramLabel = "FILE", description = "its tokenizer (default: tok512.bin)")
    Path tokenizer;

    @Option(names = "--conversations", defaultValue = "16", description = "concurrent conversations (default ${DEFAULT-VALUE})")
    int conversations;

    @Option(names = "--turns", defaultValue = "8", description = "requests per conversation (default ${DEFAULT-VALUE})")
    int turns;

    @Option(names = "--system-tokens", defaultValue = "256", description = "tokens of the shared system prompt (default ${DEFAULT-VALUE})")
    int systemTokens;

    @Option(names = "--user-tokens", defaultValue = "32", description = "tokens of each user message (default ${DEFAULT-VALUE})")
    int userTokens;

    @Option(names = "--max-tokens", defaultValue = "32", description = "most tokens of each answer (default ${DEFAULT-VALUE})")
    int maxTokens;

    @Option(names = "--device-blocks", defaultValue = "0",
            description = "device pool of the servers it starts (default 0: a quarter of the conversations' history, "
                    + "at least the longest request)")
    int deviceBlocks;

    @Option(names = "--max-batch-tokens", defaultValue = "512", description = "token budget of one engine step (default ${DEFAULT-VALUE})")
    int maxBatchTokens;

    @Option(names = "--host-cache-bytes", defaultValue = "1G", paramLabel = "SIZE",
            description = "host tier of the 'on' server (default ${DEFAULT-VALUE})")
    String hostCacheBytes;

    @Option(names = "--threads", defaultValue = "0", description = "compute threads of the servers it starts (default: one per core)")
    int threads;

    @Option(names = "--seed", defaultValue = "42", description = "seed of the user messages (default ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--png", paramLabel = "FILE", description = "also draw the latency percentiles as a PNG chart")
    Path png;

    @Override
    public Integer call() throws IOException, InterruptedException {
        Checks.atLeast(conversations, 1, "--conversations");
        Checks.atLeast(turns, 1, "--turns");
        Checks.atLeast(systemTokens, 1, "--system-tokens");
        Checks.atLeast(userTokens, 1, "--user-tokens");
        Checks.atLeast(maxTokens, 1, "--max-tokens");
        Checks.atLeast(deviceBlocks, 0, "--device-blocks");
        Checks.atLeast(threads, 0, "--threads");
        ServeLoad load = new ServeLoad(conversations, turns, systemTokens, userTokens, maxTokens, seed);
        PrintStream out = System.out;
        out.printf("bench serve: %d conversations x %d turns, system prompt %d tokens, user messages %d, answers up to %d "
                + "(longest request %d prompt tokens; history %d tokens)%n", conversations, turns, systemTokens, userTokens,
                maxTokens, load.longestPromptTokens(), load.historyTokens());
        List<ServeBenchReport.Side> sides = new ArrayList<>();
        if (url != null) {
            String base = url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
            try {
                String name = servedModel.isEmpty() ? firstModel(base) : servedModel;
                sides.add(new ServeBenchReport.Side("server", load.run(base, name), scrape(base)));
            } catch (java.net.ConnectException | IllegalArgumentException e) {
                throw new BadInputException("bench serve: cannot reach " + base + " (" + e + ")");
            }
        } else {
            sides.addAll(startAndCompare(load, out));
        }
        ServeBenchReport.print(out, sides);
        if (png != null) {
            ServeBenchReport.chart(png, sides, load);
            out.println("chart: " + png);
        }
        return 0;
    }

    private List<ServeBenchReport.Side> startAndCompare(ServeLoad load, PrintStream out) throws IOException, InterruptedException {
        Path m = ModelPaths.resolve(model, ModelPaths.DEFAULT_MODEL, "--model");
        Path t = ModelPaths.resolve(tokenizer, ModelPaths.DEFAULT_TOKENIZER, "--tokenizer");
        for (Path p : List.of(m, t)) {
            if (!Files.isRegularFile(p)) {
                throw new BadInputException((p == m ? "--model " : "--tokenizer ") + p + ": no such file");
            }
        }
        int seqLen;
        try (Checkpoint cp = Checkpoint.load(m)) {
            seqLen = cp.config().seqLen();
        }
        if (load.longestPromptTokens() + maxTokens > seqLen) {
            throw new BadInputException("the last turn needs " + (load.longestPromptTokens() + maxTokens) + " positions but the model's "
                    + "context is " + seqLen + "; lower --turns, --system-tokens, --user-tokens or --max-tokens");
        }
        int longest = (load.longestPromptTokens() + maxTokens + 15) / 16;
        int blocks = deviceBlocks > 0 ? deviceBlocks : Math.max(longest + 1, (load.historyTokens() + 15) / 16 / 4);
        long host = Sizes.parseBytes(hostCacheBytes, "--host-cache-bytes");
        if (host <= 0) {
            throw new BadInputException("--host-cache-bytes must be positive: the comparison needs a host tier for its 'on' side");
        }
        out.printf("servers: %s, device pool %d blocks of 16 (%d tokens), host tier %s on the 'on' side%n",
                m.getFileName(), blocks, blocks * 16, hostCacheBytes);
        // JIT warm-up on a throwaway server, so that the first side measured is not the slower for it.
        try (BenchServer s = new BenchServer(m, t, blocks, maxBatchTokens, host, threads)) {
            new ServeLoad(Math.min(4, conversations), Math.min(2, turns), systemTokens, userTokens, maxTokens, seed + 1)
                    .run(s.url(), BenchServer.MODEL);
        }
        List<ServeBenchReport.Side> sides = new ArrayList<>();
        for (boolean on : new boolean[] {false, true}) {
            try (BenchServer s = new BenchServer(m, t, blocks, maxBatchTokens, on ? host : 0, threads)) {
                ServeLoad.Result r = load.run(s.url(), BenchServer.MODEL);
                sides.add(new ServeBenchReport.Side(on ? "host tier on" : "host tier off", r, scrape(s.url())));
                out.printf("  %s: %.1f s%n", on ? "host tier on" : "host tier off", r.wallSeconds());
            }
        }
        return sides;
    }

    private static String firstModel(String base) throws IOException, InterruptedException {
        String body = get(base + "/v1/models");
        var data = new com.fasterxml.jackson.databind.ObjectMapper().readTree(body).path("data");
        if (data.isEmpty()) {
            throw new BadInputException("bench serve: " + base + "/v1/models lists no model; give --served-model");
        }
        return data.get(0).path("id").asText();
    }

    /** The server's /metrics text, or empty if it has none. */
    private static String scrape(String base) throws IOException, InterruptedException {
        try {
            return get(base + "/metrics");
        } catch (BadInputException e) {
            return "";
        }
    }

    private static String get(String url) throws IOException, InterruptedException {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(url)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new BadInputException("bench serve: GET " + url + " answered " + r.statusCode());
        }
        return r.body();
    }
}

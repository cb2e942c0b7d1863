package io.kvtier.cli;

import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import io.kvtier.text.Plural;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code ./kvtier bench serve}: multi-turn conversations against a server, TTFT, inter-token and
 * end-to-end latency percentiles, throughput and cached tokens; with the host tier off and on side
 * by side when it starts the servers itself.
 */
@Command(name = "serve", mixinStandardHelpOptions = true, defaultValueProvider = BenchServeCommand.Defaults.class,
        description = "Load a server with concurrent multi-turn conversations; compare the host tier off and on.")
final class BenchServeCommand implements Callable<Integer> {

    @Option(names = "--url", paramLabel = "URL", description = "a running server (e.g. http://127.0.0.1:8000, or its OpenAI base URL http://127.0.0.1:8000/v1); "
            + "default: start one with the host tier off, then one with it on, and compare")
    String url;

    @Option(names = "--served-model-name", defaultValue = "", paramLabel = "NAME",
            description = "with --url: the model name to send (default: the first of GET /v1/models)")
    String servedModel;

    /** With --url: the key of a server that requires one. */
    @Mixin
    ApiKeyOptions apiKey;

    @Mixin
    ModelOptions model;

    @Mixin
    TokenizerOptions tokenizer;

    @Option(names = "--conversations", paramLabel = "N", defaultValue = "16", description = "concurrent conversations (default ${DEFAULT-VALUE})")
    int conversations;

    @Option(names = "--turns", paramLabel = "N", defaultValue = "8", description = "requests per conversation (default ${DEFAULT-VALUE})")
    int turns;

    @Option(names = "--system-tokens", converter = TokenCount.class, paramLabel = "N", defaultValue = "256", description = "tokens of the shared system prompt (default ${DEFAULT-VALUE})")
    int systemTokens;

    @Option(names = "--user-tokens", converter = TokenCount.class, paramLabel = "N", defaultValue = "32", description = "tokens of each user message (default ${DEFAULT-VALUE})")
    int userTokens;

    /** Most tokens of each answer. */
    @Mixin
    MaxTokensOptions maxTokens;

    /** Temperature and top-p of every request; the seed picks the user messages. */
    @Mixin
    SamplingOptions sampling;

    @Mixin
    BatchOptions batch;

    /** --device-blocks: default a quarter of the conversations' history, at least the longest request. */
    @Mixin
    EngineOptions engine;

    /** The 'on' side's tiers. */
    @Mixin
    OffloadOptions offload;

    @Mixin
    EvictionOptions eviction;

    @Mixin
    DiskOptions disk;

    @Mixin
    ThreadsOptions threads;

    @Mixin
    InvarianceOptions invariance;

    @Option(names = "--png", paramLabel = "FILE", description = "also draw the latency percentiles as a PNG chart")
    Path png;

    @Spec
    CommandSpec spec;

    /**
     * The flags that shape the load itself, which a running server at {@code --url} gets as well:
     * this command's own and those of {@link #LOAD_MIXINS}. Every other flag configures the servers
     * bench serve starts (model, engine, tiers, threads, {@code --batch-invariant}) and is refused
     * with {@code --url}: listing the ones that apply means a flag added later is refused, not
     * silently ignored, until it is said to apply.
     */
    private static final java.util.Set<String> LOAD_FLAGS = java.util.Set.of("--url", "--served-model-name", "--conversations",
            "--turns", "--system-tokens", "--user-tokens", "--png", "--help", "--version");

    /** The mixins whose flags go into the requests (key, answer length, sampling). */
    private static final List<String> LOAD_MIXINS = List.of("apiKey", "maxTokens", "sampling");

    /** Every flag that configures only the servers this command starts, by its longest name, in declaration order. */
    List<String> serverFlags() {
        java.util.Set<String> load = new java.util.HashSet<>(LOAD_FLAGS);
        for (String mixin : LOAD_MIXINS) {
            spec.mixins().get(mixin).options().forEach(o -> load.add(o.longestName()));
        }
        return spec.options().stream().map(o -> o.longestName()).filter(f -> !load.contains(f)).toList();
    }

    /** This command's defaults of shared options. */
    static final class Defaults extends FlagDefaults {
        Defaults() {
            super(java.util.Map.of("--max-tokens", "32", "--block-size", "16", "--max-batch-tokens", "512",
                    "--max-running", String.valueOf(io.kvtier.engine.EngineConfig.DEFAULT_MAX_RUNNING), "--host-cache-bytes", "1G"));
        }
    }

    @Override
    public Integer call() throws IOException, InterruptedException {
        invariance.apply();
        Checks.atLeast(conversations, 1, "--conversations");
        Checks.atLeast(turns, 1, "--turns");
        Checks.atLeast(systemTokens, 1, "--system-tokens");
        Checks.atLeast(userTokens, 1, "--user-tokens");
        int maxTokens = this.maxTokens.maxTokens();
        engine.check();
        Checks.outputFile(png, "--png"); // before the bench, not after it
        if (url != null) {
            checkUrl(url);
        }
        Checks.notWith(spec, url != null, "--url", "it configures the servers bench serve starts, not a running one",
                serverFlags());
        Checks.needs(spec, url != null, "--url", "--served-model-name");
        Checks.needs(spec, url != null, "--url", ApiKeyOptions.FLAGS);
        String key = apiKey.key();
        if (url == null) {
            offload.check(eviction, disk); // as generate and serve do, before the warm-up
        }
        ServeLoad load = new ServeLoad(conversations, turns, systemTokens, userTokens, maxTokens, sampling.params());
        PrintStream out = System.out;
        // Printed once every flag and the model file are checked: a bad --model is one line, with no header above it.
        Runnable header = () -> out.printf("bench serve: %s x %s, system prompt %s, user messages %d, "
                + "answers up to %d (longest request %s; history %s)%n", Plural.count(conversations, "conversation"),
                Plural.count(turns, "turn"), Plural.count(systemTokens, "token"), userTokens, maxTokens,
                Plural.count(load.longestPromptTokens(), "prompt token"), Plural.count(load.historyTokens(), "token"));
        List<ServeBenchReport.Side> sides = new ArrayList<>();
        if (url != null) {
            String base = serverRoot(url);
            try {
                var entry = listedModel(base, servedModel, key);
                String name = servedModel.isEmpty() ? entry.path("id").asText() : servedModel;
                // Before the header, as for the servers bench serve starts: a run that cannot fit is one line.
                int seqLen = entry.path("max_model_len").asInt(0);
                if (seqLen > 0 && load.longestPromptTokens() + maxTokens > seqLen) {
                    throw new BadInputException("the last turn needs " + (load.longestPromptTokens() + maxTokens) + " positions but "
                            + base + " serves " + name + " with a context of " + seqLen
                            + "; lower --turns, --system-tokens, --user-tokens or --max-tokens");
                }
                header.run();
                String before = scrape(base);
                sides.add(new ServeBenchReport.Side("server", load.run(base, name, key), before, scrape(base)));
            } catch (java.net.ConnectException e) {
                throw new BadInputException("--url " + url + ": cannot reach the server ("
                        + (e.getCause() instanceof java.nio.channels.UnresolvedAddressException ? "unknown host" : "connection refused")
                        + ")");
            }
        } else {
            sides.addAll(startAndCompare(load, maxTokens, out, header));
        }
        ServeBenchReport.print(out, sides);
        if (png != null) {
            ServeBenchReport.chart(png, sides, load);
            out.println("chart: " + png);
        }
        return 0;
    }

    /** The two servers' sides; {@code header} runs once the model file is opened and checked. */
    private List<ServeBenchReport.Side> startAndCompare(ServeLoad load, int maxTokens, PrintStream out, Runnable header)
            throws IOException, InterruptedException {
        io.kvtier.engine.OffloadSetup on = offload.setup(eviction, disk, false);
        if (!on.enabled()) {
            throw new BadInputException("--host-cache-bytes must be positive: the comparison needs a host tier for its 'on' side");
        }
        Path m = model.model();
        OffloadOptions.checkKvGroups(on, m);
        io.kvtier.engine.EngineConfig config;
        try (ServedModel served = ServedModel.open(m, tokenizer, BenchServer.MODEL)) {
            int seqLen = served.model().config().seqLen();
            if (load.longestPromptTokens() + maxTokens > seqLen) {
                throw new BadInputException("the last turn needs " + (load.longestPromptTokens() + maxTokens) + " positions but the "
                        + "model's context is " + seqLen + "; lower --turns, --system-tokens, --user-tokens or --max-tokens");
            }
            offload.fitChunk(batch, on.enabled(), seqLen, false); // as generate and serve, but its host tier cannot be off
            config = engine.config(served.model(), batch, -1).withStopTokens(served.stopTokenIds());
            // Before the header: a budget too small is one line with nothing above it.
            io.kvtier.engine.LlamaRunner.checkBudgets(served.model(), config.blockSize(), on);
        }
        header.run();
        disk.warnRoom();
        int bs = config.blockSize();
        if (engine.deviceBlocks == null) {
            int longest = (load.longestPromptTokens() + maxTokens + bs - 1) / bs;
            config = new io.kvtier.engine.EngineConfig(bs, Math.max(longest + 1, (load.historyTokens() + bs - 1) / bs / 4),
                    config.maxBatchTokens(), config.maxRunning(), config.prefixCaching(), config.stopToken(),
                    config.moreStopTokens(), config.prefillPriority());
        }
        // Each side's scheduler as serve would run it: without the tier prefill priority is off (preempted
        // requests would recompute everything); --prefill-priority sets the 'on' side's, by default on.
        io.kvtier.engine.EngineConfig offConfig = config.withPrefillPriority(false);
        io.kvtier.engine.EngineConfig onConfig = config.withPrefillPriority(offload.prefillPriority(true));
        out.printf("servers: %s, device pool %s of %d (%s), --max-running %d, --max-batch-tokens %d, --threads %d%n",
                m.getFileName(), Plural.count(config.deviceBlocks(), "block"), bs, Plural.count((long) config.deviceBlocks() * bs, "token"),
                config.maxRunning(), config.maxBatchTokens(), threads.resolved());
        out.printf("  host tier off: no offloading; prefill priority %s%n", offConfig.prefillPriority() ? "on" : "off (FIFO admission)");
        out.printf("  host tier on:  host tier %s (--eviction %s, --store-policy %s, --load-policy %s, --blocks-per-chunk %d, "
                + "stores %s); prefill priority %s%n", on.hostChunks() > 0 ? Plural.count(on.hostChunks(), "chunk") : offload.hostCacheBytes, eviction.eviction, eviction.storePolicy, eviction.loadPolicy,
                offload.blocksPerChunk(), offload.offloadDecode ? "prompt and decode blocks" : "prompt blocks",
                onConfig.prefillPriority() ? "on (new requests' prefills preempt decodes)" : "off (FIFO admission)");
        // JIT warm-up on a throwaway server, so that the first side measured is not the slower for it.
        try (BenchServer s = new BenchServer(m, tokenizer, onConfig, on, threads.threads())) {
            new ServeLoad(Math.min(4, conversations), Math.min(2, turns), systemTokens, userTokens, maxTokens, load.sampling())
                    .run(s.url(), BenchServer.MODEL);
        }
        List<ServeBenchReport.Side> sides = new ArrayList<>();
        for (boolean hostTier : new boolean[] {false, true}) {
            String name = hostTier ? "host tier on" : "host tier off";
            try (BenchServer s = new BenchServer(m, tokenizer, hostTier ? onConfig : offConfig, hostTier ? on : io.kvtier.engine.OffloadSetup.OFF,
                    threads.threads())) {
                String before = scrape(s.url());
                ServeLoad.Result r = load.run(s.url(), BenchServer.MODEL);
                sides.add(new ServeBenchReport.Side(name, r, before, scrape(s.url())));
                out.printf("  %s: %.1f s%n", name, r.wallSeconds());
            }
        }
        return sides;
    }

    /** An http(s) URL with a host, or one line naming {@code --url}. */
    static void checkUrl(String url) {
        URI u;
        try {
            u = new URI(url);
        } catch (java.net.URISyntaxException e) {
            throw new BadInputException("--url " + url + ": not a URL (" + e.getReason() + "); give e.g. http://127.0.0.1:8000");
        }
        if (!"http".equalsIgnoreCase(u.getScheme()) && !"https".equalsIgnoreCase(u.getScheme()) || u.getHost() == null) {
            throw new BadInputException("--url " + url + ": not an http:// or https:// URL with a host; give e.g. http://127.0.0.1:8000");
        }
    }

    /**
     * The server's root, to which the routes ({@code /v1/models}, {@code /tokenize},
     * {@code /metrics}) are appended: {@code url} without a trailing {@code /}, and without a
     * trailing {@code /v1}, the base URL OpenAI clients take ({@code http://h:8000/v1} built
     * {@code /v1/v1/models}, a 404, in a new user's trial).
     */
    static String serverRoot(String url) {
        String u = url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
        return u.endsWith("/v1") ? u.substring(0, u.length() - "/v1".length()) : u;
    }

    /**
     * The entry of {@code name} in the server's {@code GET /v1/models} (the first entry when
     * {@code name} is empty); an entry with only {@code id} when the list does not hold it (the
     * server may still serve the name).
     */
    private static com.fasterxml.jackson.databind.JsonNode listedModel(String base, String name, String key)
            throws IOException, InterruptedException {
        String body = get(base + "/v1/models", key);
        var data = new com.fasterxml.jackson.databind.ObjectMapper().readTree(body).path("data");
        if (data.isEmpty() && name.isEmpty()) {
            throw new BadInputException("bench serve: " + base + "/v1/models lists no model; give --served-model-name");
        }
        for (var m : data) {
            if (name.isEmpty() || name.equals(m.path("id").asText())) {
                return m;
            }
        }
        return com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode().put("id", name);
    }

    /** The server's /metrics text, or empty if it has none. */
    private static String scrape(String base) throws IOException, InterruptedException {
        try {
            return get(base + "/metrics", null); // an open route
        } catch (BadInputException e) {
            return "";
        }
    }

    /** GET with {@code key} as {@code Authorization: Bearer} (null: none); one line for any status but 200. */
    private static String get(String url, String key) throws IOException, InterruptedException {
        HttpResponse<String> r = HttpClient.newHttpClient().send(ApiKeyOptions.bearer(HttpRequest.newBuilder(URI.create(url)).GET(), key),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() == 401) {
            throw new BadInputException("bench serve: GET " + url + " answered 401: " + (key == null
                    ? "the server requires an API key; give it with --api-key-file, --api-key-env or --api-key"
                    : "the server refused the API key given"));
        }
        if (r.statusCode() != 200) {
            throw new BadInputException("bench serve: GET " + url + " answered " + r.statusCode());
        }
        return r.body();
    }
}

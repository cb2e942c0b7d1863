package io.kvtier.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvtier.engine.Engine;
import io.kvtier.engine.EngineConfig;
import io.kvtier.engine.LlamaRunner;
import io.kvtier.engine.OffloadSetup;
import io.kvtier.engine.ReferenceRecords;
import io.kvtier.model.Checkpoint;
import io.kvtier.model.Kernels;
import io.kvtier.model.Tokenizer;
import io.kvtier.offload.OffloadConfig;
import io.kvtier.telemetry.PrometheusText;
import io.kvtier.telemetry.ServeMetrics;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A new user's trial as a test: ten concurrent completions of different prompts on a device pool
 * too small for them (40 blocks, 64 batch tokens) with the host tier, so requests are preempted
 * and re-admitted by reloading their own KV from the host tier; then the same after a device
 * prefix-cache reset, so that first admissions hit the host tier as well. Those reloads are no prefix-cache
 * hits of the prompts a client sent: the four prefix-cache counters count each request's first
 * admission only, so the hits equal the sum of the clients' {@code cached_tokens} and never exceed
 * the queries, while {@code kvtier:blocks_loaded_total} still counts every real load.
 */
class PreemptionMetricsServerTest {

    private static final String MODEL = "stories260K";
    private static final String[] SENTENCES = {
        "Once upon a time there was a little girl named Lily who loved to play in the park with her red ball.",
        "One day a big brown dog came running and took the ball away into the tall green grass.",
        "Tom was a happy boy who liked to build tall towers with his blocks in his room.",
        "The sun was shining and the birds were singing in the old tree near the house.",
        "Mom made a big cake for the party and everyone wanted to eat a piece of it.",
        "The cat sat on the warm mat and looked at the fish in the bowl all day long.",
        "Ben and his friend went to the lake to see the ducks swim and play in the water.",
        "Sue found a shiny stone on the beach and she put it in her pocket to keep it safe.",
        "The little bird could not fly because its wing was hurt, so the kind man helped it.",
        "Max had a new toy car that was very fast and he raced it down the long hall.",
    };
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @ParameterizedTest(name = "prefill priority {0}")
    @ValueSource(booleans = {true, false})
    void prefixCacheCountersCountFirstAdmissionsOnly(boolean prefillPriority) throws Exception {
        Checkpoint cp = Checkpoint.load(ReferenceRecords.model());
        Tokenizer tok = Tokenizer.load(ReferenceRecords.tokenizer(), cp.config().vocabSize());
        EngineConfig ec = new EngineConfig(16, 40, 64, EngineConfig.DEFAULT_MAX_RUNNING, true, Tokenizer.BOS)
                .withPrefillPriority(prefillPriority);
        Engine engine = LlamaRunner.engine(cp, ec, Kernels.best(), 2, new OffloadSetup(8L << 20, 0, "lru", OffloadConfig.DEFAULT));
        ServerTelemetry telemetry = new ServerTelemetry(new ServeMetrics(MODEL, engine.snapshot()), null, null);
        EngineLoop loop = new EngineLoop(engine, 64);
        OpenAiServer server = new OpenAiServer(ServerConfig.loopback(0), loop, TokenizerModelText.plain(MODEL, tok));
        telemetry.install(loop, server);
        loop.start();
        server.start();
        String base = "http://127.0.0.1:" + server.port();
        try (telemetry) {
            List<JsonNode> usages = round(base);
            ServerFixture.quiesce(loop);
            // cached_tokens is the first admission's (docs/serving.md said "last"): the first round's
            // prompts share no block and the host tier starts empty, so every first admission found
            // nothing, whatever its re-admissions reloaded.
            double reloaded = scrape(base).value("kvtier:blocks_loaded_total", "model_name", MODEL, "tier", "host");
            assertThat(reloaded).as("the first round's re-admissions reload their own KV").isPositive();
            assertThat(usages).allSatisfy(u -> assertThat(u.path("prompt_tokens_details").path("cached_tokens").asInt())
                    .as("a first admission that found nothing: " + u).isZero());
            // Again with the device cache dropped: first admissions now hit the host tier too.
            HttpResponse<String> reset = http.send(HttpRequest.newBuilder(URI.create(base + "/reset_prefix_cache"))
                    .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(reset.statusCode()).isEqualTo(200);
            usages.addAll(round(base));
            ServerFixture.quiesce(loop);
            PrometheusText p = scrape(base);
            double preemptions = p.value("vllm:num_preemptions_total", "model_name", MODEL);
            double deviceHits = p.value("vllm:prefix_cache_hits_total", "model_name", MODEL);
            double queries = p.value("vllm:prefix_cache_queries_total", "model_name", MODEL);
            double externalHits = p.value("vllm:external_prefix_cache_hits_total", "model_name", MODEL);
            double externalQueries = p.value("vllm:external_prefix_cache_queries_total", "model_name", MODEL);
            double tierHits = p.value("kvtier:external_hit_tokens_total", "model_name", MODEL, "tier", "host");
            double blocksLoaded = p.value("kvtier:blocks_loaded_total", "model_name", MODEL, "tier", "host");
            String seen = "preemptions %s, hits %s + %s of queries %s / %s, tier hits %s, blocks loaded %s"
                    .formatted(preemptions, deviceHits, externalHits, queries, externalQueries, tierHits, blocksLoaded);
            assertThat(preemptions).as("the scenario must preempt: " + seen).isPositive();
            assertThat(blocksLoaded).as("re-admissions reload from the host tier: " + seen).isPositive();
            int promptTokens = usages.stream().mapToInt(u -> u.get("prompt_tokens").asInt()).sum();
            int cached = 0;
            for (JsonNode u : usages) {
                int c = u.path("prompt_tokens_details").path("cached_tokens").asInt();
                assertThat(c).as("cached_tokens within its prompt").isBetween(0, u.get("prompt_tokens").asInt());
                cached += c;
            }
            assertThat(queries).as(seen).isEqualTo(promptTokens);
            assertThat(deviceHits + externalHits).as("hits = the clients' cached_tokens (%d): %s", cached, seen).isEqualTo(cached);
            assertThat(externalHits).as("external hits <= queries: " + seen).isLessThanOrEqualTo(externalQueries);
            assertThat(externalQueries).as(seen).isEqualTo(queries - deviceHits);
            assertThat(tierHits).as("the per-tier hits are the external hits: " + seen).isEqualTo(externalHits);
            assertThat(externalHits).as("the second round's first admissions hit the host tier: " + seen).isPositive();
        } finally {
            server.stop();
        }
    }

    /** Every prompt at once; returns each response's usage. */
    private List<JsonNode> round(String base) throws Exception {
        List<Future<JsonNode>> futures = new ArrayList<>();
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < SENTENCES.length; i++) {
                String prompt = prompt(i);
                futures.add(pool.submit(() -> complete(base, prompt)));
            }
        }
        List<JsonNode> usages = new ArrayList<>();
        for (Future<JsonNode> f : futures) {
            usages.add(f.get());
        }
        return usages;
    }

    /** 60-90 words, each prompt a different rotation of the sentences (no two share a first block). */
    private static String prompt(int i) {
        StringBuilder b = new StringBuilder();
        for (int k = 0; k < 4 + i % 2; k++) {
            b.append(k == 0 ? "" : " ").append(SENTENCES[(i + 3 * k) % SENTENCES.length]);
        }
        return b.toString();
    }

    private JsonNode complete(String base, String prompt) throws Exception {
        String body = Json.MAPPER.writeValueAsString(Map.of("model", MODEL, "prompt", prompt, "max_tokens", 60, "temperature", 0));
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(base + "/v1/completions"))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return Json.MAPPER.readTree(r.body()).get("usage");
    }

    private PrometheusText scrape(String base) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(base + "/metrics")).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        return PrometheusText.parse(r.body());
    }
}

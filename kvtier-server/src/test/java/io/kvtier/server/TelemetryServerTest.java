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
import io.kvtier.telemetry.EventWire;
import io.kvtier.telemetry.KvEventEncoder;
import io.kvtier.telemetry.KvEventPublisher;
import io.kvtier.telemetry.PrometheusText;
import io.kvtier.telemetry.ServeMetrics;
import io.kvtier.tier.KvEvents;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * The server's telemetry under real requests: {@code GET /metrics} parses and its counters and
 * histograms match what the clients were told (usage), including cached tokens after a prefix cache
 * reset; the KV events a subscriber receives (the start filled in by a replay) have no gap and
 * rebuild exactly the device prefix cache's keys and as many host keys as the host tier holds.
 */
class TelemetryServerTest {

    private static final String MODEL = "stories260K";
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @Test
    void metricsAndEventsFollowRealRequests() throws Exception {
        Checkpoint cp = Checkpoint.load(ReferenceRecords.model());
        Tokenizer tok = Tokenizer.load(ReferenceRecords.tokenizer(), cp.config().vocabSize());
        KvEvents events = KvEvents.buffered();
        EngineConfig ec = new EngineConfig(16, 128, 512, EngineConfig.DEFAULT_MAX_RUNNING, true, Tokenizer.BOS);
        Engine engine = LlamaRunner.engine(cp, ec, Kernels.best(), 2, new OffloadSetup(8L << 20, 0, "lru", OffloadConfig.DEFAULT), events);
        KvEventEncoder enc = KvEventEncoder.forEngine(engine, KvEventEncoder.HashFormat.INT);
        ServerTelemetry telemetry = new ServerTelemetry(new ServeMetrics(MODEL, engine.snapshot()), events,
                new KvEventPublisher(new KvEventPublisher.Config("tcp://127.0.0.1:*", "tcp://127.0.0.1:*", "kv"), enc));
        EngineLoop loop = new EngineLoop(engine, 64);
        OpenAiServer server = new OpenAiServer(ServerConfig.loopback(0), loop, TokenizerModelText.plain(MODEL, tok));
        telemetry.install(loop, server);
        loop.start();
        server.start();
        String base = "http://127.0.0.1:" + server.port();
        try (ZContext ctx = new ZContext(); telemetry) {
            ZMQ.Socket sub = ctx.createSocket(SocketType.SUB);
            sub.connect(telemetry.publisher().endpoint());
            sub.subscribe("kv".getBytes());
            sub.setReceiveTimeOut(200);

            PrometheusText idle = scrape(base);
            assertThat(idle.value("vllm:prompt_tokens_total", "model_name", MODEL)).isZero();

            List<JsonNode> usages = new ArrayList<>();
            String prompt = "Lily had a red ball. She liked to play with it every day. One day, the ball rolled away.";
            for (int i = 0; i < 3; i++) {
                usages.add(complete(base, prompt, i));
            }
            assertThat(post(base, "/reset_prefix_cache", "").statusCode()).isEqualTo(200);
            usages.add(complete(base, prompt, 3)); // its prefix comes back from the host tier
            assertThat(usages.getLast().path("prompt_tokens_details").path("cached_tokens").asInt()).isPositive();
            ServerFixture.quiesce(loop);

            PrometheusText p = scrape(base);
            int promptTokens = usages.stream().mapToInt(u -> u.get("prompt_tokens").asInt()).sum();
            int completion = usages.stream().mapToInt(u -> u.get("completion_tokens").asInt()).sum();
            int cached = usages.stream().mapToInt(u -> u.path("prompt_tokens_details").path("cached_tokens").asInt()).sum();
            assertThat(p.value("vllm:prompt_tokens_total", "model_name", MODEL)).isEqualTo(promptTokens);
            assertThat(p.value("vllm:generation_tokens_total", "model_name", MODEL)).isEqualTo(completion);
            assertThat(p.value("vllm:prefix_cache_hits_total", "model_name", MODEL)
                    + p.value("vllm:external_prefix_cache_hits_total", "model_name", MODEL)).as("hits = cached_tokens").isEqualTo(cached);
            assertThat(p.value("vllm:external_prefix_cache_hits_total", "model_name", MODEL)).isPositive();
            assertThat(p.value("vllm:kv_offload_total_bytes_total", "model_name", MODEL, "transfer_type", "CPU_to_GPU")).isPositive();
            assertThat(p.value("vllm:time_to_first_token_seconds_count", "model_name", MODEL)).isEqualTo(usages.size());
            assertThat(p.value("vllm:e2e_request_latency_seconds_count", "model_name", MODEL)).isEqualTo(usages.size());
            assertThat(p.value("vllm:inter_token_latency_seconds_count", "model_name", MODEL)).isEqualTo(completion - usages.size());
            assertThat(p.value("vllm:num_requests_running", "model_name", MODEL)).isZero();

            EventWire.State router = new EventWire.State();
            List<byte[]> missed = replayFrom(ctx, telemetry.publisher().replayEndpoint(), 0);
            for (int s = 0; s < missed.size(); s++) {
                router.apply(s, missed.get(s));
            }
            assertThat(router.nextSeq()).isEqualTo(telemetry.publisher().published()).isPositive();
            for (List<byte[]> m; (m = EventWire.recv(sub)) != null; ) {
                long seq = ByteBuffer.wrap(m.get(1)).getLong();
                assertThat(m.get(2)).as("live batch " + seq + " equals its replay").isEqualTo(missed.get((int) seq));
            }
            Set<Object> deviceKeys = new HashSet<>();
            int[] hostUsed = new int[1];
            loop.call(e -> {
                for (int b = 0; b < e.pool().numBlocks(); b++) {
                    if (e.pool().keyOf(b) != null) {
                        deviceKeys.add(enc.wireHash(e.pool().keyOf(b)));
                    }
                }
                hostUsed[0] = e.offload().host().capacity() - e.offload().host().index().freeSlots();
                return null;
            }).get(30, TimeUnit.SECONDS);
            assertThat(router.hashes("GPU")).isEqualTo(deviceKeys).isNotEmpty();
            assertThat(router.hashes("CPU")).hasSize(hostUsed[0]).isNotEmpty();
        } finally {
            server.stop();
        }
    }

    private JsonNode complete(String base, String prompt, int i) throws Exception {
        boolean stream = i % 2 == 1;
        String body = Json.MAPPER.writeValueAsString(Map.of("model", MODEL, "prompt", prompt, "max_tokens", 24,
                "temperature", 0, "stream", stream, "stream_options", stream ? Map.of("include_usage", true) : Map.of()));
        HttpResponse<String> r = post(base, "/v1/completions", body);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        if (!stream) {
            return Json.MAPPER.readTree(r.body()).get("usage");
        }
        JsonNode usage = SseStream.parse(r.body().lines().toList()).usage();
        assertThat(usage).isNotNull();
        return usage;
    }

    private HttpResponse<String> post(String base, String path, String body) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(base + path)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private PrometheusText scrape(String base) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(base + "/metrics")).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("Content-Type").orElse("")).startsWith("text/plain; version=0.0.4");
        return PrometheusText.parse(r.body());
    }

    private static List<byte[]> replayFrom(ZContext ctx, String endpoint, long start) {
        ZMQ.Socket dealer = ctx.createSocket(SocketType.DEALER);
        dealer.connect(endpoint);
        dealer.setReceiveTimeOut(60_000);
        dealer.sendMore(new byte[0]);
        dealer.send(ByteBuffer.allocate(8).putLong(start).array());
        List<byte[]> out = new ArrayList<>();
        while (true) {
            List<byte[]> m = EventWire.recv(dealer);
            assertThat(m).as("replay reply [\"\", topic, seq, payload]").isNotNull().hasSize(4);
            long seq = ByteBuffer.wrap(m.get(2)).getLong();
            if (seq == -1) {
                return out;
            }
            assertThat(seq).isEqualTo(start + out.size());
            out.add(m.get(3));
        }
    }

}

package io.kvtier.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvtier.engine.ReferenceRecords;
import io.kvtier.engine.ReferenceRecords.Record;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * Greedy outputs through the HTTP server equal the reference C implementation's records: 32
 * concurrent streaming clients (each record four times) with the host tier on and a device pool
 * that must preempt; then after {@code POST /reset_prefix_cache} the same again, now loading the
 * prompts' blocks from the host tier (load bytes grow) with byte-identical output.
 */
class GreedyReferenceServerTest {

    private static final List<Record> RECORDS = ReferenceRecords.load();

    @Test
    void thirtyTwoConcurrentStreamsMatchTheReferenceBeforeAndAfterAPrefixCacheReset() throws Exception {
        try (ServerFixture f = new ServerFixture(96, 16L << 20, ServerConfig.loopback(0))) {
            round(f, false);
            f.assertQuiescent();
            long loadedBefore = f.onEngine(e -> e.offload().stats().bytesLoaded());
            HttpResponse<String> reset = f.post("/reset_prefix_cache", "");
            assertThat(reset.statusCode()).isEqualTo(200);
            assertThat((int) f.<Integer>onEngine(e -> e.pool().cachedCount())).as("device prefix cache after the reset").isZero();
            List<JsonNode> usages = round(f, true);
            f.assertQuiescent();
            long loadedAfter = f.onEngine(e -> e.offload().stats().bytesLoaded());
            assertThat(loadedAfter).as("offload load bytes after the reset").isGreaterThan(loadedBefore);
            int cached = usages.stream().mapToInt(u -> u.path("prompt_tokens_details").path("cached_tokens").asInt()).sum();
            assertThat(cached).as("cached tokens reported in the second round").isPositive();
        }
    }

    /** 32 concurrent streams; asserts every output; returns each stream's usage. */
    private static List<JsonNode> round(ServerFixture f, boolean second) throws Exception {
        List<Future<SseStream>> futures = new ArrayList<>();
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int copy = 0; copy < 4; copy++) {
                for (Record rec : RECORDS) {
                    futures.add(pool.submit(() -> stream(f, rec)));
                }
            }
        }
        List<JsonNode> usages = new ArrayList<>();
        for (int i = 0; i < futures.size(); i++) {
            Record rec = RECORDS.get(i % RECORDS.size());
            SseStream s = futures.get(i).get();
            String what = (second ? "after the reset, " : "") + "stream " + i + " (prompt '" + rec.prompt() + "')";
            assertThat(s.done()).as(what + " ends with [DONE]").isTrue();
            assertThat(s.error()).as(what + " error").isNull();
            assertThat(s.tokenIds()).as(what + " token ids").containsExactly(rec.expectedOutput());
            assertThat(f.tokenizer.decode(rec.promptIds()) + s.text()).as(what + " text").isEqualTo(rec.text());
            boolean stopped = rec.generated()[rec.generated().length - 1] == 1;
            assertThat(s.finishReason()).as(what + " finish reason").isEqualTo(stopped ? "stop" : "length");
            JsonNode usage = s.usage();
            assertThat(usage).as(what + " usage").isNotNull();
            assertThat(usage.get("prompt_tokens").asInt()).isEqualTo(rec.promptIds().length);
            assertThat(usage.get("completion_tokens").asInt()).isEqualTo(rec.expectedOutput().length);
            usages.add(usage);
        }
        return usages;
    }

    private static SseStream stream(ServerFixture f, Record rec) throws Exception {
        String body = Json.MAPPER.writeValueAsString(java.util.Map.of("model", ServerFixture.MODEL, "prompt", rec.prompt(),
                "max_tokens", rec.maxTokens(), "temperature", 0, "stream", true, "return_token_ids", true,
                "stream_options", java.util.Map.of("include_usage", true)));
        HttpRequest req = HttpRequest.newBuilder(URI.create(f.base() + "/v1/completions"))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build();
        HttpResponse<java.util.stream.Stream<String>> resp = f.http.send(req, HttpResponse.BodyHandlers.ofLines());
        assertThat(resp.statusCode()).isEqualTo(200);
        assertThat(resp.headers().firstValue("Content-Type").orElse("")).startsWith("text/event-stream");
        return SseStream.parse(resp.body().toList());
    }
}

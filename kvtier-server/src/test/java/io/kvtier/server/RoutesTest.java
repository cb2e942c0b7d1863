package io.kvtier.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import io.kvtier.engine.FinishReason;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every route's shape, the API key, stop strings through HTTP (whole and streamed), the streaming
 * framing, cached tokens and cache salts, 429 when the waiting queue is full, 503 from a dead engine.
 */
class RoutesTest {

    private static final String KEY = "routes-key";
    private static ServerFixture f;

    @BeforeAll
    static void start() {
        f = new ServerFixture(128, 8L << 20, ServerConfig.loopback(0).withApiKey(KEY), 1, 1);
    }

    @AfterAll
    static void stop() {
        f.assertQuiescent();
        f.close();
    }

    private static HttpResponse<String> post(String path, String body) {
        return f.send(HttpRequest.newBuilder(URI.create(f.base() + path)).header("Authorization", "Bearer " + KEY)
                .POST(HttpRequest.BodyPublishers.ofString(body)).build());
    }

    private static HttpResponse<String> get(String path) {
        return f.send(HttpRequest.newBuilder(URI.create(f.base() + path)).header("Authorization", "Bearer " + KEY).GET().build());
    }

    private static SseStream stream(String path, String body) throws Exception {
        HttpResponse<java.util.stream.Stream<String>> r = f.http.send(HttpRequest.newBuilder(URI.create(f.base() + path))
                .header("Authorization", "Bearer " + KEY).POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofLines());
        assertThat(r.statusCode()).isEqualTo(200);
        return SseStream.parse(r.body().toList());
    }

    @Test
    void theKeyGuardsTheApiButNotTheProbes() {
        HttpResponse<String> none = f.get("/v1/models");
        assertThat(none.statusCode()).isEqualTo(401);
        assertThat(ServerFixture.json(none.body()).path("error").path("code").asText()).isEqualTo("invalid_api_key");
        assertThat(none.headers().firstValue("x-should-retry")).hasValue("false");
        assertThat(f.send(HttpRequest.newBuilder(URI.create(f.base() + "/tokenize")).header("Authorization", "Bearer nope")
                .POST(HttpRequest.BodyPublishers.ofString("{\"prompt\": \"a\"}")).build()).statusCode()).isEqualTo(401);
        assertThat(f.get("/health").statusCode()).isEqualTo(200);
        assertThat(ServerFixture.json(f.get("/version").body()).get("version").asText()).isEqualTo(OpenAiServer.VERSION);
        assertThat(f.get("/metrics").statusCode()).isEqualTo(404); // reserved: served once a metrics handler is set
    }

    @Test
    void modelsTokenizeAndDetokenize() {
        JsonNode models = ServerFixture.json(get("/v1/models").body());
        assertThat(models.get("object").asText()).isEqualTo("list");
        assertThat(models.get("data").get(0).get("id").asText()).isEqualTo(ServerFixture.MODEL);
        assertThat(models.get("data").get(0).get("max_model_len").asInt()).isEqualTo(512);
        assertThat(get("/v1/models/" + ServerFixture.MODEL).statusCode()).isEqualTo(200);
        assertThat(get("/v1/models/other").statusCode()).isEqualTo(404);
        JsonNode tok = ServerFixture.json(post("/tokenize", "{\"prompt\": \"Once upon a time\"}").body());
        int[] want = f.tokenizer.encode("Once upon a time", true);
        assertThat(tok.get("count").asInt()).isEqualTo(want.length);
        assertThat(Json.MAPPER.convertValue(tok.get("tokens"), int[].class)).containsExactly(want);
        JsonNode chatTok = ServerFixture.json(post("/tokenize", "{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}]}").body());
        assertThat(Json.MAPPER.convertValue(chatTok.get("tokens"), int[].class))
                .containsExactly(f.tokenizer.encode("User: Hi\n\nAssistant:", true));
        JsonNode detok = ServerFixture.json(post("/detokenize", "{\"tokens\": " + java.util.Arrays.toString(want) + "}").body());
        assertThat(detok.get("prompt").asText()).isEqualTo("Once upon a time");
        assertThat(post("/detokenize", "{\"tokens\": [1, -4]}").statusCode()).isEqualTo(400);
    }

    @Test
    void stopStringsAreCutTheSameWayWholeAndStreamed() throws Exception {
        String base = "{\"prompt\": \"Once upon a time\", \"max_tokens\": 60, \"temperature\": 0";
        JsonNode plain = ServerFixture.json(post("/v1/completions", base + "}").body());
        String full = plain.get("choices").get(0).get("text").asText();
        // A stop string that starts inside one token and ends in another.
        assertThat(full.length()).isGreaterThan(20);
        String stop = full.substring(full.length() / 2 - 1, full.length() / 2 + 4);
        String want = full.substring(0, full.indexOf(stop));
        com.fasterxml.jackson.databind.node.ObjectNode req = (com.fasterxml.jackson.databind.node.ObjectNode) ServerFixture.json(base + "}");
        req.putArray("stop").add(stop);
        String body = req.toString();
        body = body.substring(0, body.length() - 1);
        Map<FinishReason, Long> before = finishedBy();
        int abortedBefore = f.aborted.get();
        JsonNode whole = ServerFixture.json(post("/v1/completions", body + "}").body());
        assertThat(whole.get("choices").get(0).get("text").asText()).isEqualTo(want);
        assertThat(whole.get("choices").get(0).get("finish_reason").asText()).isEqualTo("stop");
        // stream_options with the stream only: on a whole request they are a 400, as in OpenAI and vLLM.
        SseStream s = stream("/v1/completions", body + ", \"stream\": true, \"stream_options\": {\"include_usage\": true}}");
        assertThat(s.text()).isEqualTo(want);
        assertThat(s.finishReason()).isEqualTo("stop");
        int used = whole.get("usage").get("completion_tokens").asInt();
        assertThat(s.usage().get("completion_tokens").asInt()).isEqualTo(used)
                .isLessThan(plain.get("usage").get("completion_tokens").asInt());
        // The token that completes the stop string is also the last one max_tokens allows: still "stop".
        String capped = body.replace("\"max_tokens\":60", "\"max_tokens\":" + used);
        assertThat(capped).isNotEqualTo(body);
        JsonNode atLimit = ServerFixture.json(post("/v1/completions", capped + "}").body());
        assertThat(atLimit.get("choices").get(0).get("finish_reason").asText()).isEqualTo("stop");
        assertThat(atLimit.get("choices").get(0).get("text").asText()).isEqualTo(want);
        SseStream atLimitStreamed = stream("/v1/completions", capped + ", \"stream\": true}");
        assertThat(atLimitStreamed.finishReason()).isEqualTo("stop");
        assertThat(atLimitStreamed.text()).isEqualTo(want);
        // vllm:request_success reads the engine's count: the same reason as the four responses, none aborted.
        Map<FinishReason, Long> after = finishedBy();
        assertThat(after.get(FinishReason.STOP) - before.get(FinishReason.STOP)).isEqualTo(4);
        assertThat(after.get(FinishReason.LENGTH)).isEqualTo(before.get(FinishReason.LENGTH));
        assertThat(after.get(FinishReason.ABORT)).isEqualTo(before.get(FinishReason.ABORT));
        assertThat(f.aborted.get()).isEqualTo(abortedBefore);
    }

    private static Map<FinishReason, Long> finishedBy() {
        return f.onEngine(e -> e.snapshot().engine().finishedBy());
    }

    @Test
    void chatStreamFraming() throws Exception {
        String body = "{\"messages\": [{\"role\": \"user\", \"content\": \"Tell me a story.\"}], \"max_tokens\": 10, \"temperature\": 0, \"stream\": true";
        SseStream s = stream("/v1/chat/completions", body + ", \"stream_options\": {\"include_usage\": true}}");
        assertThat(s.done()).isTrue();
        assertThat(s.chunks().getFirst().get("choices").get(0).get("delta").get("role").asText()).isEqualTo("assistant");
        List<JsonNode> withChoices = s.chunks().stream().filter(c -> !c.get("choices").isEmpty()).toList();
        for (JsonNode c : withChoices.subList(0, withChoices.size() - 1)) {
            assertThat(c.get("choices").get(0).get("finish_reason").isNull()).isTrue();
            assertThat(c.get("object").asText()).isEqualTo("chat.completion.chunk");
        }
        assertThat(withChoices.getLast().get("choices").get(0).get("finish_reason").asText()).isEqualTo("length");
        assertThat(s.usage().get("completion_tokens").asInt()).isEqualTo(10);
        assertThat(s.chunks().getLast().get("choices")).isEmpty();
        SseStream noUsage = stream("/v1/chat/completions", body + "}");
        assertThat(noUsage.usage()).isNull();
        assertThat(noUsage.text()).isEqualTo(s.text());
        assertThat(noUsage.done()).isTrue();
    }

    @Test
    void aClientsSeedRepeatsTheSampledTokensWhateverRanBetween() {
        String seeded = "{\"prompt\": \"Once\", \"max_tokens\": 16, \"temperature\": 1, \"seed\": 7, \"return_token_ids\": true}";
        JsonNode first = ServerFixture.json(post("/v1/completions", seeded).body()).get("choices").get(0);
        post("/v1/completions", "{\"prompt\": \"Once\", \"max_tokens\": 16, \"temperature\": 1}");
        JsonNode again = ServerFixture.json(post("/v1/completions", seeded).body()).get("choices").get(0);
        assertThat(again.get("token_ids")).hasSize(first.get("token_ids").size()).isEqualTo(first.get("token_ids"));
        assertThat(again.get("text").asText()).isNotEmpty().isEqualTo(first.get("text").asText());
    }

    /**
     * return_token_ids streamed (trial26: prompt_token_ids never came): in the first chunk only, where
     * vLLM sends them (a chat's role chunk at its top level; a completion's first choice), as in the
     * whole response; each token chunk has its ids, which add up to the whole response's.
     */
    @Test
    void returnTokenIdsSendsThePromptsIdsInTheFirstChunk() throws Exception {
        int[] prompt = f.tokenizer.encode("Once upon a time", true);
        String completion = "{\"prompt\": \"Once upon a time\", \"max_tokens\": 6, \"temperature\": 0, \"return_token_ids\": true";
        JsonNode whole = ServerFixture.json(post("/v1/completions", completion + "}").body());
        assertThat(ints(whole.get("choices").get(0).get("prompt_token_ids"))).containsExactly(prompt);
        SseStream s = stream("/v1/completions", completion + ", \"stream\": true}");
        assertThat(ints(s.chunks().getFirst().get("choices").get(0).get("prompt_token_ids"))).containsExactly(prompt);
        assertThat(s.chunks().subList(1, s.chunks().size())).allSatisfy(c -> assertThat(c.toString()).doesNotContain("prompt_token_ids"));
        assertThat(s.tokenIds()).containsExactly(ints(whole.get("choices").get(0).get("token_ids")));

        String chat = "{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}], \"max_tokens\": 4, \"temperature\": 0,"
                + " \"return_token_ids\": true";
        JsonNode chatWhole = ServerFixture.json(post("/v1/chat/completions", chat + "}").body());
        int[] chatPrompt = ints(chatWhole.get("prompt_token_ids"));
        assertThat(chatPrompt).isNotEmpty();
        SseStream cs = stream("/v1/chat/completions", chat + ", \"stream\": true}");
        JsonNode first = cs.chunks().getFirst();
        assertThat(first.get("choices").get(0).get("delta").get("role").asText()).isEqualTo("assistant");
        assertThat(ints(first.get("prompt_token_ids"))).containsExactly(chatPrompt);
        assertThat(cs.chunks().subList(1, cs.chunks().size())).allSatisfy(c -> assertThat(c.toString()).doesNotContain("prompt_token_ids"));
        assertThat(cs.tokenIds()).containsExactly(ints(chatWhole.get("choices").get(0).get("token_ids")));
        // Without the field, no ids at all.
        assertThat(stream("/v1/completions", "{\"prompt\": \"Once\", \"max_tokens\": 2, \"stream\": true}").rawLines())
                .noneMatch(l -> l.contains("token_ids"));
    }

    private static int[] ints(JsonNode array) {
        return Json.MAPPER.convertValue(array, int[].class);
    }

    @Test
    void cachedTokensCountDeviceHitsAndCacheSaltsSeparateTenants() {
        String prompt = "Lily had a red ball. She liked to play with it in the park every day with her friends.";
        String a = "{\"prompt\": \"" + prompt + "\", \"max_tokens\": 2, \"cache_salt\": \"tenant-a\"}";
        String b = "{\"prompt\": \"" + prompt + "\", \"max_tokens\": 2, \"cache_salt\": \"tenant-b\"}";
        JsonNode first = ServerFixture.json(post("/v1/completions", a).body()).get("usage");
        JsonNode again = ServerFixture.json(post("/v1/completions", a).body()).get("usage");
        JsonNode other = ServerFixture.json(post("/v1/completions", b).body()).get("usage");
        int promptTokens = first.get("prompt_tokens").asInt();
        assertThat(first.get("prompt_tokens_details").get("cached_tokens").asInt()).isZero();
        assertThat(again.get("prompt_tokens_details").get("cached_tokens").asInt()).isEqualTo((promptTokens - 1) / 16 * 16);
        assertThat(other.get("prompt_tokens_details").get("cached_tokens").asInt()).as("another tenant's salt").isZero();
    }

    @Test
    void withOneRunningAndOneWaitingSixRequestsAtOnceGetTwoAnswersAndFour429s() throws Exception {
        CountDownLatch hold = new CountDownLatch(1);
        f.loop.call(e -> {
            try {
                hold.await(); // the engine takes no request in until released
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
            }
            return null;
        });
        List<CompletableFuture<HttpResponse<String>>> all = new java.util.ArrayList<>();
        for (int i = 0; i < 6; i++) {
            String body = "{\"prompt\": \"Lily " + i + "\", \"max_tokens\": 2}";
            all.add(CompletableFuture.supplyAsync(() -> post("/v1/completions", body)));
        }
        // --max-running 1 --max-waiting 1: two are in flight (one to run, one to wait), four are refused,
        // whether or not the engine thread has taken the first one in yet.
        int refused = 0;
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(60);
        while (all.stream().filter(CompletableFuture::isDone).count() < 4) {
            assertThat(System.nanoTime() < deadline).as("four answers within 60 s while the engine is held").isTrue();
            Thread.sleep(1);
        }
        assertThat(f.loop.inFlightCount()).isEqualTo(2);
        for (CompletableFuture<HttpResponse<String>> r : all) {
            if (r.isDone()) {
                HttpResponse<String> second = r.get();
                assertThat(second.statusCode()).as(second.body()).isEqualTo(429);
                assertThat(second.headers().firstValue("Retry-After")).hasValue("1");
                assertThat(second.headers().firstValue("x-should-retry")).isEmpty();
                refused++;
            }
        }
        hold.countDown();
        int served = 0;
        for (CompletableFuture<HttpResponse<String>> r : all) {
            if (r.get().statusCode() == 200) {
                served++;
            }
        }
        assertThat(refused).isEqualTo(4);
        assertThat(served).isEqualTo(2);
    }

    @Test
    void withNoWaitingQueueARequestBeyondTheRunningOnesGets429AtOnce() throws Exception {
        // --max-running 2 --max-waiting 0: two in flight run, every further one is refused while they are in.
        try (ServerFixture noQueue = new ServerFixture(128, 0, ServerConfig.loopback(0), 2, 0)) {
            CountDownLatch hold = new CountDownLatch(1);
            noQueue.loop.call(e -> {
                try {
                    hold.await(); // the engine takes no request in until released
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                }
                return null;
            });
            java.util.function.Function<Integer, HttpResponse<String>> post = i -> noQueue.send(HttpRequest.newBuilder(
                    URI.create(noQueue.base() + "/v1/completions")).POST(HttpRequest.BodyPublishers.ofString(
                    "{\"prompt\": \"Lily " + i + "\", \"max_tokens\": 2}")).build());
            List<CompletableFuture<HttpResponse<String>>> admitted = new java.util.ArrayList<>();
            for (int i = 0; i < 2; i++) {
                int k = i;
                admitted.add(CompletableFuture.supplyAsync(() -> post.apply(k)));
            }
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(60);
            while (noQueue.loop.inFlightCount() < 2) {
                assertThat(System.nanoTime() < deadline).as("two requests in flight within 60 s").isTrue();
                Thread.sleep(1);
            }
            HttpResponse<String> third = post.apply(2);
            assertThat(third.statusCode()).as(third.body()).isEqualTo(429);
            assertThat(third.headers().firstValue("Retry-After")).hasValue("1");
            assertThat(ServerFixture.json(third.body()).path("error").path("message").asText())
                    .isEqualTo("all 2 running places are taken and there is no waiting queue; retry later");
            hold.countDown();
            for (CompletableFuture<HttpResponse<String>> r : admitted) {
                assertThat(r.get().statusCode()).as(r.get().body()).isEqualTo(200);
            }
            assertThat(post.apply(3).statusCode()).as("served once the others are done").isEqualTo(200);
        }
    }

    @Test
    void aDeadEngineMakesHealth503AndRequestsFailCleanly() {
        try (ServerFixture dying = new ServerFixture(64, 0, ServerConfig.loopback(0))) {
            dying.killOnNextStep.set(true);
            HttpResponse<String> r = dying.post("/v1/completions", "{\"prompt\": \"a\", \"max_tokens\": 5}");
            assertThat(r.statusCode()).isEqualTo(500);
            assertThat(ServerFixture.json(r.body()).path("error").path("message").asText()).contains("test: engine killed");
            while (dying.loop.alive()) {
                ServerFixture.sleep(5);
            }
            assertThat(dying.get("/health").statusCode()).isEqualTo(503);
            HttpResponse<String> after = dying.post("/v1/completions", "{\"prompt\": \"a\", \"max_tokens\": 5}");
            assertThat(after.statusCode()).isEqualTo(503);
        }
    }
}

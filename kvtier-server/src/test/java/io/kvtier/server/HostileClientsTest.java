package io.kvtier.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/**
 * Bad input and hostile clients: each gets a clear OpenAI error or is served, the server keeps
 * serving, and after each test every device block is free or cached and every tier pin released.
 */
class HostileClientsTest {

    private static ServerFixture f;

    @BeforeAll
    static void start() {
        f = new ServerFixture(128, 8L << 20, ServerConfig.loopback(0), 32);
    }

    @AfterAll
    static void stop() {
        f.close();
    }

    @AfterEach
    void stillServingAndNothingLeaks() {
        HttpResponse<String> ok = f.post("/v1/completions", "{\"prompt\": \"Once upon a time\", \"max_tokens\": 3}");
        assertThat(ok.statusCode()).as(ok.body()).isEqualTo(200);
        f.assertQuiescent();
    }

    private static void assertError(HttpResponse<String> r, int status, String param, String messagePart) {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
        JsonNode err = ServerFixture.json(r.body()).get("error");
        assertThat(err).as(r.body()).isNotNull();
        assertThat(err.get("message").asText()).contains(messagePart);
        assertThat(err.has("type") && err.has("param") && err.has("code")).isTrue();
        if (param != null) {
            assertThat(err.get("param").asText()).isEqualTo(param);
        }
        assertThat(r.headers().firstValue("x-should-retry")).as("x-should-retry").hasValue("false");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "{\"prompt\": \"a\", \"max_tokens\": |  | malformed JSON",
        "[1, 2, 3] |  | must be a JSON object",
        "{\"prompt\": \"a\", \"max_tokens\": \"ten\"} | max_tokens | must be an integer",
        "{\"prompt\": \"a\", \"max_tokens\": 0} | max_tokens | must be in 1..",
        "{\"prompt\": \"a\", \"max_tokens\": -5} | max_tokens | must be in 1..",
        "{\"prompt\": \"a\", \"max_tokens\": 1e12} | max_tokens | must be an integer",
        "{\"prompt\": \"a\", \"temperature\": \"hot\"} | temperature | must be a number",
        "{\"prompt\": \"a\", \"temperature\": 1e308} | temperature | must be a number in [0.0, 2.0]",
        "{\"prompt\": \"a\", \"top_p\": 0} | top_p | must be a number in (0",
        "{\"prompt\": \"a\", \"top_p\": 1e-46} | top_p | top_p must be a number in (0.0, 1.0], got 1.0E-46",
        "{\"prompt\": \"a\", \"top_p\": 1e-300} | top_p | top_p must be a number in (0.0, 1.0], got 1.0E-300",
        "{\"prompt\": \"a\", \"temperature\": -1e-50} | temperature | must be a number in [0.0, 2.0], got -1.0E-50",
        "{\"prompt\": \"a\", \"seed\": 1e30} | seed | 64-bit integer",
        "{\"prompt\": \"a\", \"n\": 1000000} | n | n must be 1",
        "{\"prompt\": \"a\", \"n\": 0} | n | n must be 1: kvtier returns one choice per request, got 0",
        "{\"prompt\": \"a\", \"n\": \"1\"} | n | n must be an integer, got \"1\"",
        "{\"prompt\": \"a\", \"logprobs\": 2} | logprobs | logprobs is not supported by kvtier",
        "{\"prompt\": \"a\", \"logprobs\": 0} | logprobs | logprobs is not supported by kvtier",
        "{\"prompt\": \"a\", \"logit_bias\": {\"5\": 100}} | logit_bias | logit_bias is not supported by kvtier",
        "{\"prompt\": \"a\", \"echo\": true} | echo | echo is not supported",
        "{\"prompt\": \"a\", \"best_of\": 3} | best_of | best_of is not supported",
        "{\"prompt\": \"a\", \"suffix\": \"end\"} | suffix | suffix is not supported",
        "{\"prompt\": \"a\", \"stream\": \"yes\"} | stream | true or false",
        "{\"prompt\": \"a\", \"stop\": 5} | stop | stop must be a string",
        "{\"prompt\": \"a\", \"stop\": [\"a\", \"b\", \"c\", \"d\", \"e\"]} | stop | at most 4",
        "{\"prompt\": \"a\", \"stop\": [\"\"]} | stop | must not be empty",
        "{\"prompt\": \"a\", \"stop\": [\"\\ud835\"]} | stop | stop[0] has half a surrogate pair (\\ud835) at character 0, not valid Unicode; remove it",
        "{\"prompt\": \"a\", \"stop\": [\"x\", \"\\u0000\"]} | stop | stop[1] has a NUL character (\\u0000) at character 0; remove it",
        "{\"prompt\": \"a\", \"stop\": \"ab\\udc00\"} | stop | stop has half a surrogate pair (\\udc00) at character 2",
        "{\"prompt\": 123} | prompt | prompt must be a string or an array",
        "{\"prompt\": [1, 99999]} | prompt | prompt[1] must be a token id",
        "{\"prompt\": [\"a\", \"b\"]} | prompt | a batch of 2 prompts",
        "{\"prompt\": []} | prompt | empty array",
        "{\"max_tokens\": 3} | prompt | prompt is required",
        "{\"prompt\": \"a\", \"stream_options\": 7} | stream_options | must be an object",
        "{\"prompt\": \"a\", \"stream\": true, \"stream_options\": {\"include_usage\": 1}} | stream_options.include_usage | stream_options.include_usage must be true or false",
        "{\"prompt\": \"a\", \"stream_options\": {\"include_usage\": true}} | stream_options | only allowed with \"stream\": true",
        "{\"prompt\": \"a\", \"cache_salt\": 7} | cache_salt | must be a string",
        "{\"prompt\": \"a\", \"cache_salt\": \"\\ud800\"} | cache_salt | cache_salt has half a surrogate pair (\\ud800) at character 0, not valid Unicode; two such salts could share blocks",
        "{\"prompt\": \"x\\u0000y\"} | prompt | has a NUL character (\\u0000) at character 1;",
        "{\"prompt\": \"ab\\ud800\"} | prompt | your prompt has half a surrogate pair (\\ud800) at character 2, not valid Unicode; remove it",
        "{\"prompt\": \"\\udc00x\"} | prompt | half a surrogate pair (\\udc00) at character 0",
        "{\"prompt\": \"hi\"} trailing |  | malformed JSON",
        "{\"prompt\": \"hi\"} {} |  | malformed JSON in the request body: text after the JSON object (at line 1",
        "{\"prompt\": \"hi\", \"temperature\": NaN} |  | malformed JSON in the request body: Non-standard token 'NaN' (at line 1",
        "{\"prompt\": \"hi\", \"max_tokens\": 2, \"max_tokens\": 3} |  | Duplicate field 'max_tokens'",
    })
    void badCompletionRequestsGetA400NamingTheParameter(String body, String param, String message) {
        assertError(f.post("/v1/completions", body), 400, param, message);
    }

    /** A whole surrogate pair (an emoji escaped as JSON does) is a character like any other. */
    @Test
    void aWholeSurrogatePairIsAccepted() {
        HttpResponse<String> r = f.post("/v1/completions", "{\"prompt\": \"a \\ud83d\\ude00\", \"max_tokens\": 2}");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "{\"messages\": \"hi\"} | messages | messages must be a non-empty array",
        "{\"messages\": []} | messages | messages must be a non-empty array",
        "{\"messages\": [{\"content\": \"hi\"}]} | messages.[0].role | string role",
        "{\"messages\": [7]} | messages.[0] | must be an object",
        "{\"messages\": [{\"role\": \"user\", \"content\": \"a\"}, {\"role\": \"wizard\", \"content\": \"hi\"}]} | messages.[1].role | Invalid value: 'wizard'",
        "{\"messages\": [{\"role\": \"User\", \"content\": \"hi\"}]} | messages.[0].role | Supported values are",
        "{\"messages\": [{\"role\": \"user\", \"content\": 5}]} | messages.[0].content | content must be a string",
        "{\"messages\": [{\"role\": \"user\", \"content\": \"a\"}, {\"role\": \"user\", \"content\": [{\"type\": \"image_url\", \"image_url\": {\"url\": \"http://x/y.png\"}}]}]} | messages.[1].content | only {\"type\": \"text\"",
        "{\"messages\": [{\"role\": \"user\", \"content\": [{\"type\": \"text\", \"text\": 3}]}]} | messages.[0].content | only {\"type\": \"text\"",
        "{\"messages\": [{\"role\": \"user\"}]} | messages.[0].content | Missing required parameter: 'messages[0].content'.",
        "{\"messages\": [{\"role\": \"system\", \"content\": \"s\"}, {\"role\": \"user\", \"content\": null}]} | messages.[1].content | expected a string, got null",
        "{\"messages\": [{\"role\": \"system\"}, {\"role\": \"user\", \"content\": \"hi\"}]} | messages.[0].content | Missing required parameter",
        "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}, {\"role\": \"assistant\"}]} | messages.[1].content | Missing required parameter",
        "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}], \"max_completion_tokens\": -1} | max_completion_tokens | must be in 1..",
        "{\"messages\": [{\"role\": \"user\", \"content\": \"x\\u0000y\"}]} | messages.[0].content | has a NUL character (\\u0000) at character 1;",
        "{\"messages\": [{\"role\": \"user\", \"content\": \"x\\ud83d\"}]} | messages.[0].content | has half a surrogate pair (\\ud83d) at character 1",
    })
    void badChatRequestsGetA400NamingTheParameter(String body, String param, String message) {
        assertError(f.post("/v1/chat/completions", body), 400, param, message);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "{\"logprobs\": true} | logprobs",
        "{\"top_logprobs\": 2} | top_logprobs",
        "{\"response_format\": {\"type\": \"json_object\"}} | response_format",
        "{\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"f\"}}]} | tools",
        "{\"functions\": [{\"name\": \"f\"}]} | functions",
        "{\"tool_choice\": \"required\"} | tool_choice",
    })
    void chatFieldsKvtierDoesNotComputeAreRefusedNotIgnored(String extra, String param) {
        String body = "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}], \"max_tokens\": 2, " + extra.substring(1);
        assertError(f.post("/v1/chat/completions", body), 400, param, param + " is not supported by kvtier");
        String off = "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}], \"max_tokens\": 2, "
                + "\"logprobs\": false, \"top_logprobs\": 0, \"tools\": [], \"functions\": [], \"tool_choice\": \"none\", "
                + "\"logit_bias\": {}, \"response_format\": {\"type\": \"text\"}}";
        assertThat(f.post("/v1/chat/completions", off).statusCode()).as("the off values").isEqualTo(200);
    }

    @Test
    void contentMayBeLeftOutOnlyWhereOpenAiDocumentsIt() {
        // An assistant message with tool_calls may have null or no content; a function message null content.
        String body = "{\"max_tokens\": 2, \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}, "
                + "{\"role\": \"assistant\", \"content\": null, \"tool_calls\": [{\"id\": \"c1\", \"type\": \"function\", "
                + "\"function\": {\"name\": \"f\", \"arguments\": \"{}\"}}]}, {\"role\": \"assistant\", \"function_call\": "
                + "{\"name\": \"f\", \"arguments\": \"{}\"}}, {\"role\": \"function\", \"name\": \"f\", \"content\": null}, "
                + "{\"role\": \"user\", \"content\": \"ok\"}]}";
        HttpResponse<String> r = f.post("/v1/chat/completions", body);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(ServerFixture.json(r.body()).path("usage").path("completion_tokens").asInt()).isBetween(1, 2);
        // Left out (not null) in a function message is still missing.
        assertError(f.post("/v1/chat/completions", "{\"messages\": [{\"role\": \"function\", \"name\": \"f\"}]}"),
                400, "messages.[0].content", "Missing required parameter");
        // What reaches the chat template must have its shape: tool_calls objects, a string tool_call_id.
        assertError(f.post("/v1/chat/completions", "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}, "
                + "{\"role\": \"assistant\", \"tool_calls\": \"calc\"}]}"), 400, "messages.[1].tool_calls", "array of objects");
        assertError(f.post("/v1/chat/completions", "{\"messages\": [{\"role\": \"tool\", \"content\": \"4\", "
                + "\"tool_call_id\": 7}]}"), 400, "messages.[0].tool_call_id", "must be a string");
    }

    @Test
    void aPromptOverTheContextSaysMaximumContextLength() {
        String longText = "Once upon a time there was a cat. ".repeat(120);
        HttpResponse<String> r = f.post("/v1/completions", "{\"prompt\": \"" + longText + "\"}");
        assertError(r, 400, "prompt", "maximum context length is 512 tokens");
        StringBuilder ids = new StringBuilder("[1");
        for (int i = 0; i < 600; i++) {
            ids.append(", 300");
        }
        assertError(f.post("/v1/completions", "{\"prompt\": " + ids + "]}"), 400, "prompt", "maximum context length");
        assertError(f.post("/v1/completions", "{\"prompt\": \"" + "x".repeat(900_000) + "\"}"), 400, "prompt", "maximum context length");
        assertError(f.post("/v1/chat/completions", "{\"messages\": [{\"role\": \"user\", \"content\": \"" + longText + "\"}]}"),
                400, "messages", "maximum context length is 512 tokens");
        String huge = "x".repeat(900_000); // refused by its size before the encoder runs
        assertError(f.post("/v1/chat/completions", "{\"messages\": [{\"role\": \"user\", \"content\": \"" + huge + "\"}]}"),
                400, "messages", "maximum context length");
    }

    @Test
    void absurdButValidValuesAreServedAndUnknownFieldsIgnored() {
        HttpResponse<String> r = f.post("/v1/completions", "{\"prompt\": \"Once\", \"max_tokens\": 2147483647, \"seed\": -1,"
                + " \"temperature\": 2, \"top_p\": 1e-30, \"frobnicate\": {\"x\": [1]}, \"logit_bias\": null}");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        JsonNode u = ServerFixture.json(r.body()).get("usage");
        assertThat(u.get("prompt_tokens").asInt() + u.get("completion_tokens").asInt()).isLessThanOrEqualTo(513);
    }

    @Test
    void unknownRoutesModelsAndMethods() {
        assertError(f.get("/v2/nothing"), 404, null, "no route");
        assertError(f.post("/v1/completions", "{\"model\": \"gpt-4\", \"prompt\": \"a\"}"), 404, "model", "does not exist");
        assertThat(f.get("/v1/completions").statusCode()).isEqualTo(405);
    }

    @Test
    void aHundredMegabyteBodyGets413WithoutBeingRead() throws Exception {
        long size = 100L << 20;
        byte[] piece = "a".repeat(0x10000).getBytes(StandardCharsets.US_ASCII);
        // With a Content-Length: refused from the header, before any of the body is read.
        sendHugeBody("Content-Length: " + size, size, piece);
        // Chunked, no length: the server stops reading after its limit and answers 413.
        byte[] chunk = ("10000\r\n" + "a".repeat(0x10000) + "\r\n").getBytes(StandardCharsets.US_ASCII);
        sendHugeBody("Transfer-Encoding: chunked", size, chunk);
    }

    /** Streams {@code size} bytes of {@code piece}s after the headers while reading the answer: 413 and the error object. */
    private static void sendHugeBody(String framing, long size, byte[] piece) throws Exception {
        try (RawHttp c = new RawHttp(f.server.port())) {
            c.headers("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + framing + "\r\n\r\n");
            Thread writer = Thread.ofVirtual().start(() -> {
                try {
                    for (long sent = 0; sent < size; sent += piece.length) {
                        c.out.write(piece);
                    }
                } catch (IOException closed) {
                    // the server closed the connection after its 413
                }
            });
            assertThat(c.status()).isEqualTo(413);
            assertThat(ServerFixture.json(c.body()).path("error").path("code").asText()).isEqualTo("request_too_large");
            c.close();
            writer.join();
        }
    }

    @Test
    void aClientThatDisconnectsMidStreamIsAbortedAndItsBlocksFreed() throws Exception {
        int abortedBefore = f.aborted.get();
        CountDownLatch pause = new CountDownLatch(1);
        try (RawHttp c = new RawHttp(f.server.port())) {
            c.post("/v1/chat/completions", "{\"messages\": [{\"role\": \"user\", \"content\": \"Tell a long story.\"}],"
                    + " \"max_tokens\": 400, \"temperature\": 1, \"stream\": true}");
            assertThat(c.status()).isEqualTo(200);
            assertThat(c.readUntil("data: ")).contains("\"role\":\"assistant\"");
            // Hold the engine while the client goes away, so the request is still generating when the server notices.
            holdEngineUntil(pause);
        }
        ServerFixture.sleep(100);
        pause.countDown();
        f.assertQuiescent();
        assertThat(f.aborted.get()).as("requests aborted by a departed client").isGreaterThan(abortedBefore);
    }

    @Test
    void aNonStreamingClientThatLeavesWhileQueuedIsAbortedWithinOneStep() throws Exception {
        assertThat(ClientWatch.UNAVAILABLE).as("the test JVM opens jdk.httpserver (pom jvm.flags)").isNull();
        long abortedBefore = finished(io.kvtier.engine.FinishReason.ABORT);
        long generatedBefore = generatedTokens();
        CountDownLatch pause = new CountDownLatch(1);
        holdEngineUntil(pause); // the request stays queued
        try (RawHttp c = new RawHttp(f.server.port())) {
            c.post("/v1/completions", "{\"prompt\": \"Once upon a time\", \"max_tokens\": 300, \"temperature\": 1, \"seed\": 4}");
            ServerFixture.sleep(100); // the request is read and submitted
        }
        ServerFixture.sleep(1000); // the handler's probes (every 200 ms while queued) see the closed connection
        pause.countDown();
        f.assertQuiescent();
        assertThat(finished(io.kvtier.engine.FinishReason.ABORT) - abortedBefore).as("requests aborted").isEqualTo(1);
        long generated = generatedTokens();
        // Aborted before its first step, or (a probe late under load) after one step's token.
        assertThat(generated - generatedBefore).as("tokens generated for it").isLessThanOrEqualTo(1);
    }

    @Test
    void aNonStreamingClientThatLeavesWhileGeneratingIsAbortedAndItsBlocksFreed() throws Exception {
        long abortedBefore = finished(io.kvtier.engine.FinishReason.ABORT);
        long generatedBefore = generatedTokens();
        CountDownLatch pause = new CountDownLatch(1);
        try (RawHttp c = new RawHttp(f.server.port())) {
            c.post("/v1/completions", "{\"prompt\": \"Once upon a time\", \"max_tokens\": 400, \"temperature\": 1, \"seed\": 4}");
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(60);
            while (generatedTokens() == generatedBefore) {
                assertThat(System.nanoTime() < deadline).as("the request generates within 60 s").isTrue();
                Thread.sleep(1);
            }
            holdEngineUntil(pause); // while the client goes away: the request is mid-generation
        }
        ServerFixture.sleep(100);
        pause.countDown();
        f.assertQuiescent();
        assertThat(finished(io.kvtier.engine.FinishReason.ABORT) - abortedBefore).as("requests aborted").isEqualTo(1);
        long generated = generatedTokens();
        assertThat(generated - generatedBefore).as("tokens generated").isLessThan(400);
    }

    /** Tokens the engine generated so far, read on its thread. */
    private static long generatedTokens() {
        return f.onEngine(e -> e.snapshot().engine().generatedTokens());
    }

    /** Queues a task that holds the engine thread until {@code pause} opens; returns at once. */
    private static void holdEngineUntil(CountDownLatch pause) {
        f.loop.call(e -> {
            awaitQuietly(pause);
            return null;
        });
    }

    private static long finished(io.kvtier.engine.FinishReason reason) {
        return f.onEngine(e -> e.snapshot().engine().finishedBy().get(reason));
    }

    @Test
    void twoHundredConnectionsAtOnceAreServedOrToldToRetry() throws Exception {
        List<Future<HttpResponse<String>>> all = new ArrayList<>();
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < 200; i++) {
                String body = i % 2 == 0 ? "{\"prompt\": \"Lily had a ball " + i + "\", \"max_tokens\": 8, \"stream\": " + (i % 4 == 0) + "}"
                        : "{\"messages\": [{\"role\": \"user\", \"content\": \"Hi " + i + "\"}], \"max_tokens\": 8}";
                String path = i % 2 == 0 ? "/v1/completions" : "/v1/chat/completions";
                all.add(pool.submit(() -> f.post(path, body)));
            }
        }
        int served = 0;
        int retry = 0;
        for (Future<HttpResponse<String>> fut : all) {
            HttpResponse<String> r = fut.get();
            if (r.statusCode() == 200) {
                served++;
            } else {
                assertThat(r.statusCode()).as(r.body()).isEqualTo(429);
                assertThat(r.headers().firstValue("Retry-After")).hasValue("1");
                assertThat(ServerFixture.json(r.body()).path("error").path("code").asText()).isEqualTo("queue_full");
                retry++;
            }
        }
        assertThat(served + retry).isEqualTo(200);
        assertThat(served).isPositive();
    }

    @Test
    void aSlowReaderDoesNotHoldTheEngineOrOtherClients() throws Exception {
        try (Socket s = new Socket()) {
            s.setReceiveBufferSize(1024);
            s.connect(new java.net.InetSocketAddress("127.0.0.1", f.server.port()));
            s.setSoTimeout(60_000);
            byte[] body = "{\"prompt\": \"\", \"max_tokens\": 300, \"temperature\": 0, \"stream\": true}".getBytes(StandardCharsets.UTF_8);
            s.getOutputStream().write(("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
                    + body.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().write(body);
            InputStream in = s.getInputStream();
            in.read(new byte[16]); // the response has begun; now read nothing for a while
            HttpResponse<String> other = f.post("/v1/completions", "{\"prompt\": \"Once upon a time\", \"max_tokens\": 5}");
            assertThat(other.statusCode()).isEqualTo(200);
            f.assertQuiescent(); // the slow reader's request has finished in the engine, its blocks are free
            StringBuilder rest = new StringBuilder();
            byte[] buf = new byte[256];
            for (int n; (n = in.read(buf)) > 0; ) {
                rest.append(new String(buf, 0, n, StandardCharsets.ISO_8859_1));
                if (rest.indexOf("data: [DONE]") >= 0) {
                    break;
                }
                Thread.sleep(1);
            }
            assertThat(rest.toString()).contains("\"finish_reason\":\"").contains("data: [DONE]");
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

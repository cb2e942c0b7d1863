package io.kvtier.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.http.HttpResponse;
import java.util.Arrays;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A device pool smaller than the model's context (a new user's trial: {@code serve --device-blocks
 * 12}): 12 blocks of 16 hold 192 of stories260K's 512 positions. A request without max_tokens gets
 * the room the pool leaves; a max_tokens that cannot fit is a 400 naming the field and what fits;
 * a prompt that cannot fit is a 400 naming the prompt; /v1/models says 192.
 */
class SmallPoolTest {

    private static ServerFixture f;

    @BeforeAll
    static void start() {
        f = new ServerFixture(12, 0, ServerConfig.loopback(0));
    }

    @AfterAll
    static void stop() {
        f.assertQuiescent();
        f.close();
    }

    /** A prompt of {@code n} token ids (BOS, then a word id repeated). */
    private static String ids(int n) {
        int[] ids = new int[n];
        Arrays.fill(ids, 300);
        ids[0] = 1;
        return Arrays.stream(ids).mapToObj(Integer::toString).collect(Collectors.joining(",", "[", "]"));
    }

    private static JsonNode error(HttpResponse<String> r) {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(400);
        return ServerFixture.json(r.body()).get("error");
    }

    @Test
    void modelsAndTokenizeSayWhatARequestCanUse() {
        assertThat(ServerFixture.json(f.get("/v1/models").body()).get("data").get(0).get("max_model_len").asInt()).isEqualTo(192);
        assertThat(ServerFixture.json(f.get("/v1/models/" + ServerFixture.MODEL).body()).get("max_model_len").asInt()).isEqualTo(192);
        assertThat(ServerFixture.json(f.post("/tokenize", "{\"prompt\": \"Once\"}").body()).get("max_model_len").asInt())
                .isEqualTo(192);
    }

    @Test
    void withoutMaxTokensARequestGetsTheRoomThePoolLeaves() {
        // 150 prompt tokens: 192 - 150 + 1 = 43 new tokens fit (the last sampled one needs no KV).
        JsonNode r = ServerFixture.json(f.post("/v1/completions", "{\"prompt\": " + ids(150) + ", \"temperature\": 0}").body());
        assertThat(r.get("choices").get(0).get("finish_reason").asText()).as(r.toString()).isEqualTo("length");
        assertThat(r.get("usage").get("completion_tokens").asInt()).isEqualTo(43);
        JsonNode chat = ServerFixture.json(f.post("/v1/chat/completions",
                "{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}], \"max_tokens\": null}").body());
        assertThat(chat.has("choices")).as(chat.toString()).isTrue();
    }

    @Test
    void aMaxTokensThatCannotFitNamesTheFieldAndWhatFits() {
        JsonNode e = error(f.post("/v1/completions", "{\"prompt\": " + ids(3) + ", \"max_tokens\": 500}"));
        assertThat(e.get("param").asText()).isEqualTo("max_tokens");
        assertThat(e.get("message").asText()).isEqualTo("max_tokens 500 does not fit: a request can use 192 token positions"
                + " here, what the device pool holds for one request (12 blocks of 16), and this prompt has 3 tokens, so at most"
                + " 190 new tokens fit; send max_tokens 190 or less, or leave it out");
        JsonNode chat = error(f.post("/v1/chat/completions", "{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}],"
                + " \"max_completion_tokens\": 191}"));
        assertThat(chat.get("param").asText()).isEqualTo("max_completion_tokens");
        assertThat(chat.get("message").asText()).doesNotContain("--");
        // Beyond the context's room a value is capped first (as generate's --max-tokens), then checked.
        assertThat(error(f.post("/v1/completions", "{\"prompt\": " + ids(3) + ", \"max_tokens\": 100000}"))
                .get("message").asText()).startsWith("max_tokens 100000 does not fit").contains("at most 190 new tokens");
        JsonNode fits = ServerFixture.json(f.post("/v1/completions", "{\"prompt\": " + ids(3) + ", \"max_tokens\": 190}").body());
        assertThat(fits.has("choices")).as(fits.toString()).isTrue();
    }

    @Test
    void aPromptThatCannotFitNamesThePrompt() {
        JsonNode e = error(f.post("/v1/completions", "{\"prompt\": " + ids(250) + ", \"max_tokens\": 1}"));
        assertThat(e.get("param").asText()).isEqualTo("prompt");
        assertThat(e.get("code").asText()).isEqualTo("context_length_exceeded");
        assertThat(e.get("message").asText()).isEqualTo("This server's maximum context length is 192 tokens (what the device"
                + " pool holds for one request (12 blocks of 16); the model's context is 512). However, your prompt has 250"
                + " tokens. Please reduce the length of the prompt.");
        String longText = "Once upon a time ".repeat(60);
        JsonNode chat = error(f.post("/v1/chat/completions", "{\"messages\": [{\"role\": \"user\", \"content\": \"" + longText + "\"}]}"));
        assertThat(chat.get("param").asText()).isEqualTo("messages");
        assertThat(chat.get("code").asText()).isEqualTo("context_length_exceeded");
        // 192 tokens fit exactly: the prompt fills the pool and one token is sampled.
        JsonNode full = ServerFixture.json(f.post("/v1/completions", "{\"prompt\": " + ids(192) + "}").body());
        assertThat(full.get("usage").get("completion_tokens").asInt()).as(full.toString()).isEqualTo(1);
    }

    @Test
    void theStartNoteSaysTheLimitOnlyWhenThePoolSetsIt() {
        assertThat(f.loop.contextLimit().startNote()).isEqualTo("a request can use at most 192 token positions"
                + " (prompt + max_tokens - 1), what the device pool holds for one request (12 blocks of 16); the model's"
                + " context is 512 (/v1/models says max_model_len 192)");
        assertThat(new ContextLimit(512, 32, 16).startNote()).isNull();
        assertThat(new ContextLimit(512, 32, 16).positions()).isEqualTo(512);
    }
}

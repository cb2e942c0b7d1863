package io.kvtier.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;

/**
 * {@code POST /reset_prefix_cache}'s one query parameter: {@code include_offload} is exactly
 * {@code true} or {@code false}; anything else (a new user tried {@code yes}, {@code TRUE} and
 * {@code bogus}, which were a 200 that kept the tiers) is a 400 naming it, and the tiers stay.
 */
class ResetPrefixCacheTest {

    @Test
    void includeOffloadIsExactlyTrueOrFalseAndAnythingElseIs400WithTheTiersKept() {
        try (ServerFixture f = new ServerFixture(128, 8L << 20, ServerConfig.loopback(0))) {
            String body = "{\"model\": \"" + ServerFixture.MODEL + "\", \"prompt\": \"Lily had a red ball. She liked to play "
                    + "with it every day. One day, the ball rolled away.\", \"max_tokens\": 4, \"temperature\": 0}";
            assertThat(f.post("/v1/completions", body).statusCode()).isEqualTo(200);
            f.assertQuiescent();
            int stored = hostChunks(f);
            assertThat(stored).as("host chunks after one completion").isPositive();

            for (String bad : new String[] {"include_offload=yes", "include_offload=TRUE", "include_offload=bogus",
                "include_offload=1", "include_offload", "include_offload=", "include_offload=true&include_offload=true"}) {
                HttpResponse<String> r = f.post("/reset_prefix_cache?" + bad, "");
                assertThat(r.statusCode()).as(bad).isEqualTo(400);
                JsonNode error = ServerFixture.json(r.body()).path("error");
                assertThat(error.path("param").asText()).as(bad).isEqualTo("include_offload");
                assertThat(error.path("type").asText()).isEqualTo("invalid_request_error");
                assertThat(error.path("message").asText()).as(bad).contains("include_offload");
            }
            HttpResponse<String> unknown = f.post("/reset_prefix_cache?include_ofload=true", "");
            assertThat(unknown.statusCode()).isEqualTo(400);
            assertThat(ServerFixture.json(unknown.body()).path("error").path("param").asText()).isEqualTo("include_ofload");
            assertThat(hostChunks(f)).as("host chunks after the refused resets").isEqualTo(stored);

            assertThat(f.post("/reset_prefix_cache?include_offload=false", "").statusCode()).isEqualTo(200);
            assertThat(hostChunks(f)).as("host chunks after include_offload=false").isEqualTo(stored);
            assertThat(f.post("/reset_prefix_cache?include_offload=tru%65", "").statusCode()).as("percent-encoded true")
                    .isEqualTo(200);
            assertThat(hostChunks(f)).as("host chunks after include_offload=true").isZero();
        }
    }

    private static int hostChunks(ServerFixture f) {
        return f.onEngine(e -> {
            e.drainTransfers();
            return e.offload().host().index().readyCount();
        });
    }
}

package io.kvtier.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What a new user's trial sent that clients libraries rarely do (trial26): HEAD and OPTIONS, a
 * lower-case {@code bearer}, a doubled slash in the path.
 */
class HttpEdgesTest {

    private static final String KEY = "edges-key";
    private static ServerFixture f;
    /** The JDK server's own log records (its HEAD warning went to stderr as "kvtier: WARNING: ..."). */
    private static final List<String> serverLog = new CopyOnWriteArrayList<>();
    private static final Logger JDK_SERVER = Logger.getLogger("com.sun.net.httpserver");
    private static final Handler CAPTURE = new Handler() {
        @Override
        public void publish(LogRecord r) {
            if (r.getLevel().intValue() >= Level.WARNING.intValue()) {
                serverLog.add(r.getMessage());
            }
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    @BeforeAll
    static void start() {
        JDK_SERVER.addHandler(CAPTURE);
        f = new ServerFixture(64, 0, ServerConfig.loopback(0).withApiKey(KEY));
    }

    @AfterAll
    static void stop() {
        JDK_SERVER.removeHandler(CAPTURE);
        f.assertQuiescent();
        f.close();
    }

    private static HttpResponse<String> send(String method, String path, String auth) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(f.base() + path)).method(method, HttpRequest.BodyPublishers.noBody());
        if (auth != null) {
            b.header("Authorization", auth);
        }
        return f.send(b.build());
    }

    @Test
    void headAnswersAsGetWithoutABodyAndWithoutAWarning() {
        HttpResponse<String> get = send("GET", "/v1/models", "Bearer " + KEY);
        HttpResponse<String> head = send("HEAD", "/v1/models", "Bearer " + KEY);
        assertThat(head.statusCode()).isEqualTo(200);
        assertThat(head.body()).isEmpty();
        assertThat(head.headers().firstValue("Content-Type")).hasValue("application/json");
        assertThat(head.headers().firstValue("Content-Length")).hasValue(String.valueOf(get.body().length()));
        HttpResponse<String> health = send("HEAD", "/health", null);
        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(health.headers().firstValue("Content-Length")).hasValue("2"); // {}
        assertThat(send("HEAD", "/version", null).statusCode()).isEqualTo(200);
        assertThat(send("HEAD", "/v1/models", null).statusCode()).as("the key guards HEAD too").isEqualTo(401);
        assertThat(send("HEAD", "/nothing", null).statusCode()).isEqualTo(404);
        assertThat(serverLog).isEmpty();
    }

    @Test
    void optionsSaysTheMethodsAndA405DoesToo() {
        HttpResponse<String> post = send("OPTIONS", "/v1/chat/completions", null);
        assertThat(post.statusCode()).isEqualTo(204);
        assertThat(post.headers().firstValue("Allow")).hasValue("POST, OPTIONS");
        HttpResponse<String> get = send("OPTIONS", "/health", null);
        assertThat(get.statusCode()).isEqualTo(204);
        assertThat(get.headers().firstValue("Allow")).hasValue("GET, HEAD, OPTIONS");
        assertThat(send("OPTIONS", "/v1/models/" + ServerFixture.MODEL, null).headers().firstValue("Allow"))
                .hasValue("GET, HEAD, OPTIONS");
        assertThat(send("OPTIONS", "/nothing", null).statusCode()).isEqualTo(404);
        HttpResponse<String> delete = send("DELETE", "/health", null);
        assertThat(delete.statusCode()).isEqualTo(405);
        assertThat(delete.headers().firstValue("Allow")).hasValue("GET, HEAD, OPTIONS");
        assertThat(ServerFixture.json(delete.body()).get("error").get("message").asText())
                .isEqualTo("DELETE is not allowed on /health (allowed: GET, HEAD, OPTIONS)");
        HttpResponse<String> getPost = send("GET", "/v1/completions", "Bearer " + KEY);
        assertThat(getPost.statusCode()).isEqualTo(405);
        assertThat(getPost.headers().firstValue("Allow")).hasValue("POST, OPTIONS");
    }

    @Test
    void theBearerSchemeIsCaseInsensitive() {
        for (String auth : List.of("Bearer " + KEY, "bearer " + KEY, "BEARER " + KEY, "  bearer   " + KEY + "  ")) {
            assertThat(send("GET", "/v1/models", auth).statusCode()).as(auth).isEqualTo(200);
        }
        for (String auth : List.of("Basic " + KEY, "Bearer" + KEY, KEY, "Bearer " + KEY + "x", "Bearer", "bearer  ")) {
            assertThat(send("GET", "/v1/models", auth).statusCode()).as(auth).isEqualTo(401);
        }
        assertThat(Routes.bearerToken("bEaReR abc")).isEqualTo("abc");
        assertThat(Routes.bearerToken(null)).isEmpty();
    }

    @Test
    void repeatedSlashesAreOne() throws Exception {
        for (String path : List.of("//v1/models", "/v1//models", "//v1//models/", "///v1/models")) {
            try (RawHttp raw = new RawHttp(f.server.port())) {
                raw.headers("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + KEY + "\r\n\r\n");
                int status = raw.status();
                String body = raw.body();
                assertThat(status).as(path + ": " + body).isEqualTo(path.endsWith("/") ? 404 : 200);
                if (status == 200) {
                    assertThat(ServerFixture.json(body).get("object").asText()).isEqualTo("list");
                }
            }
        }
        try (RawHttp raw = new RawHttp(f.server.port())) {
            raw.headers("GET //v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
            assertThat(raw.status()).as("the key guards the path however it is spelt").isEqualTo(401);
        }
        assertThat(Routes.path(URI.create("//v1/models"))).isEqualTo("/v1/models");
        assertThat(Routes.path(URI.create("/v1//chat//completions"))).isEqualTo("/v1/chat/completions");
        assertThat(Routes.path(URI.create("http://127.0.0.1:8000//v1/models"))).isEqualTo("/v1/models");
    }
}

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
import io.kvtier.tier.TierIndex;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A real server on stories260K, in process, on a free loopback port: the engine (optionally with a
 * host tier) in an {@link EngineLoop}, the {@link OpenAiServer} over it, and checks of the engine's
 * state after a test (every device block free or cached, every tier pin released).
 */
final class ServerFixture implements AutoCloseable {

    static final String MODEL = "stories260K";

    final Tokenizer tokenizer;
    /** Requests the engine finished by an abort (a departed client, a stop string). */
    final java.util.concurrent.atomic.AtomicInteger aborted = new java.util.concurrent.atomic.AtomicInteger();
    /** Set to make the engine thread fail after its next step that has a request (a stand-in for a bug). */
    final java.util.concurrent.atomic.AtomicBoolean killOnNextStep = new java.util.concurrent.atomic.AtomicBoolean();
    final EngineLoop loop;
    final OpenAiServer server;
    final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10)).build();

    ServerFixture(int deviceBlocks, long hostBytes, ServerConfig config) {
        this(deviceBlocks, hostBytes, config, 64);
    }

    ServerFixture(int deviceBlocks, long hostBytes, ServerConfig config, int maxWaiting) {
        this(deviceBlocks, hostBytes, config, EngineConfig.DEFAULT_MAX_RUNNING, maxWaiting);
    }

    ServerFixture(int deviceBlocks, long hostBytes, ServerConfig config, int maxRunning, int maxWaiting) {
        Checkpoint cp = Checkpoint.load(ReferenceRecords.model());
        this.tokenizer = Tokenizer.load(ReferenceRecords.tokenizer(), cp.config().vocabSize());
        OffloadSetup offload = hostBytes > 0 ? new OffloadSetup(hostBytes, 0, "lru", OffloadConfig.DEFAULT) : OffloadSetup.OFF;
        EngineConfig ec = new EngineConfig(16, deviceBlocks, 512, maxRunning, true, Tokenizer.BOS);
        Engine engine = LlamaRunner.engine(cp, ec, Kernels.best(), 2, offload);
        this.loop = new EngineLoop(engine, maxWaiting);
        loop.addStepListener((e, finished) -> finished.stream()
                .filter(r -> r.finishReason() == io.kvtier.engine.FinishReason.ABORT).forEach(r -> aborted.incrementAndGet()));
        loop.addStepListener((e, finished) -> {
            // Listeners also run after idle turns of the loop: fail only once a request is in.
            if (killOnNextStep.get() && e.hasWork()) {
                throw new IllegalStateException("test: engine killed");
            }
        });
        loop.start();
        try {
            this.server = new OpenAiServer(config, loop, TokenizerModelText.plain(MODEL, tokenizer)).start();
        } catch (IOException e) {
            loop.shutdown(Duration.ZERO);
            throw new UncheckedIOException(e);
        }
    }

    static ServerFixture plain() {
        return new ServerFixture(256, 0, ServerConfig.loopback(0));
    }

    String base() {
        return "http://127.0.0.1:" + server.port();
    }

    HttpResponse<String> post(String path, String body) {
        return send(HttpRequest.newBuilder(URI.create(base() + path)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build());
    }

    HttpResponse<String> get(String path) {
        return send(HttpRequest.newBuilder(URI.create(base() + path)).GET().build());
    }

    HttpResponse<String> send(HttpRequest req) {
        try {
            return http.send(req, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    static JsonNode json(String s) {
        try {
            return Json.MAPPER.readTree(s);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Runs {@code fn} on the engine thread and returns its result. */
    <T> T onEngine(java.util.function.Function<Engine, T> fn) {
        try {
            return loop.call(fn).get(60, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("engine call failed: " + e, e);
        }
    }

    /**
     * Waits until the engine has no request left (aborts of departed clients take a step), drains the
     * transfers, then checks: pool and offload invariants; every device block free or cached; no
     * request holds blocks; no tier entry pinned or storing; no job in flight.
     */
    void assertQuiescent() {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (onEngine(Engine::hasWork)) {
            assertThat(System.nanoTime() < deadline).as("the engine still has requests after 60 s").isTrue();
            sleep(20);
        }
        onEngine(e -> {
            e.drainTransfers();
            e.pool().checkInvariants();
            assertThat(e.kvCacheManager().activeRequests()).as("requests holding blocks").isZero();
            assertThat(e.pool().freeCount()).as("free (incl. cached) device blocks").isEqualTo(e.pool().numBlocks());
            assertThat(e.pool().emptyCount()).isEqualTo(e.pool().numBlocks() - e.pool().cachedCount());
            if (e.offload() != null) {
                e.offload().checkInvariants();
                assertThat(e.offload().jobsInFlight()).as("jobs in flight").isZero();
                TierIndex idx = e.offload().host().index();
                assertThat(idx.pinnedCount()).as("pinned host entries").isZero();
                assertThat(idx.storingCount()).as("storing host entries").isZero();
            }
            return null;
        });
    }

    /**
     * Waits until {@code loop}'s engine has no request and no transfer left (60 s at most), then a
     * few idle turns more: its listeners and metrics have seen the last step.
     */
    static void quiesce(EngineLoop loop) throws Exception {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(60);
        while (loop.call(e -> {
            e.drainTransfers();
            return e.hasWork();
        }).get(60, java.util.concurrent.TimeUnit.SECONDS)) {
            assertThat(System.nanoTime() < deadline).as("requests still running after 60 s").isTrue();
            Thread.sleep(20);
        }
        Thread.sleep(100);
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        server.stop();
    }
}

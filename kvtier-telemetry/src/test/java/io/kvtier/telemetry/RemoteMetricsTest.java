package io.kvtier.telemetry;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.engine.Engine;
import io.kvtier.engine.OffloadSetup;
import io.kvtier.engine.Request;
import io.kvtier.offload.DiskWritePolicy;
import io.kvtier.offload.OffloadConfig;
import io.kvtier.offload.RemoteStats;
import io.kvtier.tier.remote.Await;
import io.kvtier.tier.remote.OwnRedis;
import io.kvtier.tier.remote.RedisServers;
import io.kvtier.tier.remote.RemoteSettings;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The remote tier's series in {@code /metrics}, scraped and parsed by {@link PrometheusText}, move
 * with its counters against a real Redis: engine A stores (chunks stored, bytes {@code CPU_to_REMOTE},
 * breaker closed), engine B with an empty host tier loads (chunks loaded, remote hit tokens, bytes
 * {@code REMOTE_to_CPU}), engine C with a 1-byte write budget drops every store ({@code budget}).
 */
class RemoteMetricsTest {

    private static final String M = TestEngines.MODEL;

    private final String tenant = "metrics" + Long.toHexString(new Random().nextLong() & 0xffffffL);
    private final List<String> warnings = new CopyOnWriteArrayList<>();

    @TempDir
    Path dir;

    private Engine engine(long maxBytesInFlight) {
        return engine(RemoteSettings.of(List.of(RedisServers.standalone()), false, tenant, null).withTimeout(Duration.ofSeconds(5)),
                maxBytesInFlight);
    }

    private Engine engine(RemoteSettings s, long maxBytesInFlight) {
        return TestEngines.engine(256, new OffloadSetup(16L << 20, 0, "lru", OffloadConfig.DEFAULT).withRemote(
                new OffloadSetup.RemoteSetup(s, DiskWritePolicy.THROUGH, 1, maxBytesInFlight, warnings::add)), null);
    }

    private static PrometheusText scrape(Engine e) {
        ServeMetrics metrics = new ServeMetrics(M, e.snapshot());
        return PrometheusText.parse(new String(metrics.scrape(), StandardCharsets.UTF_8));
    }

    @Test
    void remoteSeriesMoveWithStoresLoadsAndDrops() {
        try (Engine a = engine(64L << 20)) {
            PrometheusText before = scrape(a);
            assertThat(before.value("kvtier:remote_chunks_stored_total", "model_name", M)).isZero();
            assertThat(before.value("kvtier:remote_write_latency_seconds", "model_name", M)).isEqualTo(-1);
            // Every failure cause and drop reason is a series from the start, at 0 (a rate or an
            // alert on it must not wait for the first event).
            assertThat(before.matching("kvtier:remote_load_failures_total").stream().map(x -> x.labels().get("cause")))
                    .containsExactlyInAnyOrder("miss", "timeout", "verify", "unavailable", "error");
            assertThat(before.matching("kvtier:remote_store_failures_total").stream().map(x -> x.labels().get("cause")))
                    .containsExactlyInAnyOrder("timeout", "oversize", "unavailable", "error");
            assertThat(before.matching("kvtier:remote_stores_dropped_total").stream().map(x -> x.labels().get("reason")))
                    .containsExactlyInAnyOrder("budget", "unavailable", "slow");
            assertThat(before.matching("kvtier:remote_probe_failures_total").stream().map(x -> x.labels().get("cause")))
                    .containsExactlyInAnyOrder("timeout", "unavailable", "error");
            for (String series : List.of("kvtier:remote_load_failures_total", "kvtier:remote_store_failures_total",
                    "kvtier:remote_stores_dropped_total", "kvtier:remote_probe_failures_total")) {
                assertThat(before.matching(series)).allSatisfy(x -> assertThat(x.value()).isZero());
            }
            TestEngines.runRecords(a, 0);
            RemoteStats rs = a.offload().remoteStats();
            PrometheusText p = scrape(a);
            assertThat(p.value("kvtier:remote_chunks_stored_total", "model_name", M)).isEqualTo(rs.chunksStored()).isPositive();
            assertThat(p.value("kvtier:remote_writes_total", "model_name", M)).isEqualTo(rs.writes()).isPositive();
            assertThat(p.value("kvtier:blocks_stored_total", "model_name", M, "tier", "remote"))
                    .isEqualTo(a.offload().stats().blocksStored().get("remote").doubleValue()).isPositive();
            assertThat(p.value("vllm:kv_offload_total_bytes_total", "model_name", M, "transfer_type", "CPU_to_REMOTE"))
                    .isEqualTo(a.offload().stats().stores().get("remote").bytes()).isPositive();
            assertThat(p.value("kvtier:remote_breaker_state", "model_name", M, "state", "closed")).isEqualTo(1);
            assertThat(p.value("kvtier:remote_breaker_state", "model_name", M, "state", "open")).isZero();
            assertThat(p.value("kvtier:remote_bytes_in_flight", "model_name", M)).isZero();
            assertThat(p.value("kvtier:remote_write_latency_seconds", "model_name", M)).isPositive();
            assertThat(p.value("vllm:kv_offload_total_bytes_total", "model_name", M, "transfer_type", "REMOTE_to_CPU"))
                    .as("the remote tier's load series exists at 0 before its first load").isZero();
        }
        try (Engine b = engine(64L << 20)) {
            List<Request> done = TestEngines.runRecords(b, 100);
            long remoteHits = done.stream().mapToLong(r -> r.promptExternalHitTokensByTier().getOrDefault("remote", 0)).sum();
            RemoteStats rs = b.offload().remoteStats();
            PrometheusText q = scrape(b);
            assertThat(q.value("kvtier:remote_chunks_loaded_total", "model_name", M)).isEqualTo(rs.chunksLoaded()).isPositive();
            assertThat(q.value("kvtier:remote_probes_total", "model_name", M)).isEqualTo(rs.probes()).isPositive();
            assertThat(q.value("kvtier:remote_chunks_probed_present_total", "model_name", M)).isEqualTo(rs.chunksProbedPresent());
            assertThat(q.value("kvtier:external_hit_tokens_total", "model_name", M, "tier", "remote")).isEqualTo(remoteHits).isPositive();
            assertThat(q.value("vllm:kv_offload_total_bytes_total", "model_name", M, "transfer_type", "REMOTE_to_CPU"))
                    .isEqualTo(b.offload().stats().loads().get("remote").bytes()).isPositive();
            assertThat(q.value("kvtier:blocks_loaded_total", "model_name", M, "tier", "remote")).isPositive();
        }
        // One chunk's value (a budget below it is refused at start): the records, all at once, drop the rest.
        try (Engine c = engine(20_672)) {
            TestEngines.runRecords(c, 200);
            RemoteStats rs = c.offload().remoteStats();
            PrometheusText d = scrape(c);
            assertThat(d.value("kvtier:remote_stores_dropped_total", "model_name", M, "reason", RemoteStats.BUDGET))
                    .isEqualTo(rs.storesDroppedBy().get(RemoteStats.BUDGET).doubleValue()).isPositive();
            assertThat(d.value("kvtier:remote_chunks_stored_total", "model_name", M)).isEqualTo(rs.chunksStored());
            assertThat(d.value("kvtier:remote_stores_dropped_total", "model_name", M, "reason", RemoteStats.SLOW)).isZero();
        }
        assertThat(warnings).isEmpty();
    }

    private static double breaker(PrometheusText p, String state) {
        return p.value("kvtier:remote_breaker_state", "model_name", M, "state", state);
    }

    /**
     * The breaker gauge says each state as it is, {@code half_open} apart from {@code open}, and an
     * idle engine's returns to {@code closed} once its store is back: a dashboard read an idle
     * serve's half-open breaker, reported as open, as a store still down after it had come back.
     */
    @Test
    void theBreakerGaugeOfAnIdleEngineReturnsToClosedWhenTheStoreIsBack() throws Exception {
        try (OwnRedis redis = OwnRedis.start(dir.resolve("r"));
             Engine e = engine(RemoteSettings.of(List.of(redis.url()), false, tenant, null).withTimeout(Duration.ofMillis(500))
                     .withBreakerOpen(Duration.ofMillis(100)), 64L << 20)) {
            TestEngines.runRecords(e, 0);
            PrometheusText up = scrape(e);
            assertThat(up.matching("kvtier:remote_breaker_state").stream().map(x -> x.labels().get("state")))
                    .containsExactlyInAnyOrder("closed", "partial", "half_open", "open", "off");
            assertThat(breaker(up, "closed")).isEqualTo(1);
            redis.kill();
            e.resetCache(); // the host tier forgets: the records go to the dead store again
            TestEngines.runRecords(e, 100);
            PrometheusText down = scrape(e);
            assertThat(breaker(down, "closed")).isZero();
            assertThat(breaker(down, "open") + breaker(down, "half_open")).as("down, or its trial out").isEqualTo(1);
            assertThat(Await.until(warnings::size, 1)).as("said once: %s", warnings).isEqualTo(1);
            assertThat(warnings.getFirst()).contains(" stopped answering (");

            redis.restart();
            assertBackWithoutARequest(e, redis);
        }
    }

    /**
     * An idle engine (no request at all) whose store is killed or frozen: its gauge moves to
     * {@code open} and the one line says so with no request to fail (it read {@code closed} until
     * one came); once the store is back, {@code closed} and the line saying so.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"killed", "frozen"})
    void theBreakerGaugeOfAnIdleEngineOpensWhenItsStoreIsLost(String outage) throws Exception {
        boolean killed = outage.equals("killed");
        try (OwnRedis redis = OwnRedis.start(dir.resolve("r"));
             Engine e = engine(RemoteSettings.of(List.of(redis.url()), false, tenant, null).withTimeout(Duration.ofMillis(500))
                     .withBreakerOpen(Duration.ofMillis(100)), 64L << 20)) {
            assertThat(breaker(scrape(e), "closed")).isEqualTo(1);
            if (killed) {
                redis.kill();
            } else {
                redis.freeze();
            }
            PrometheusText down = awaitBreaker(e, "open");
            assertThat(breaker(down, "open")).isEqualTo(1);
            assertThat(down.value("kvtier:remote_breaker_opens_total", "model_name", M)).isEqualTo(1);
            assertThat(Await.until(warnings::size, 1)).as("said once: %s", warnings).isEqualTo(1);
            assertThat(warnings).first().asString().startsWith("remote tier: " + redis.url() + " stopped answering ("
                    + (killed ? "unavailable" : "timeout") + ": ");
            if (killed) {
                redis.restart();
            } else {
                redis.thaw();
            }
            assertBackWithoutARequest(e, redis);
        }
    }

    /** Scrapes {@code e} until its breaker gauge reads {@code state} (no request: the store tries itself); the last scrape. */
    private static PrometheusText awaitBreaker(Engine e, String state) throws InterruptedException {
        return Await.untilMatch(() -> scrape(e), p -> breaker(p, state) == 1);
    }

    /** With no request, the store's own trial closes {@code e}'s breaker and one line says so. */
    private void assertBackWithoutARequest(Engine e, OwnRedis redis) throws InterruptedException {
        PrometheusText back = awaitBreaker(e, "closed");
        assertThat(breaker(back, "closed")).isEqualTo(1);
        assertThat(breaker(back, "open") + breaker(back, "half_open") + breaker(back, "partial")).isZero();
        // The gauge moves a moment before the line is said.
        assertThat(Await.until(warnings::size, 2)).as("its return said: %s", warnings).isEqualTo(2);
        assertThat(warnings.getLast()).isEqualTo("remote tier: " + redis.url() + " answers again");
    }
}

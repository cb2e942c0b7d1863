package io.kvtier.telemetry;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.engine.Engine;
import io.kvtier.engine.FinishReason;
import io.kvtier.engine.Request;
import io.kvtier.offload.OffloadStats;
import io.kvtier.engine.EngineConfig;
import io.kvtier.engine.LlamaRunner;
import io.kvtier.engine.OffloadSetup;
import io.kvtier.engine.SamplingParams;
import io.kvtier.kv.ExtraKeys;
import io.kvtier.model.Kernels;
import io.kvtier.model.Models;
import io.kvtier.model.DigestCache;
import io.kvtier.model.gguf.LlamaCppReference;
import io.kvtier.offload.OffloadConfig;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The metrics of a real engine, scraped in the library's text format and parsed by
 * {@link PrometheusText} (an independent parser: the library has none), move as the engine's
 * counters do: first a round of the reference prompts (stores to the host tier), then the same
 * prompts with the device prefix cache dropped (loads from the host tier).
 */
class ServeMetricsTest {

    private static final String M = TestEngines.MODEL;

    @Test
    void countersAndGaugesFollowTheEngineThroughStoresAndLoads() {
        try (Engine e = TestEngines.engine(256, 16L << 20, null)) {
            ServeMetrics metrics = new ServeMetrics(M, e.snapshot());
            PrometheusText before = scrape(metrics);
            assertThat(before.value("vllm:prompt_tokens_total", "model_name", M)).isZero();
            assertThat(before.value("vllm:kv_cache_usage_perc", "model_name", M)).isZero();
            assertThat(before.value("kvtier:tier_chunks_used", "model_name", M, "tier", "host")).isZero();

            List<Request> first = TestEngines.runRecords(e, 0);
            metrics.update(e.snapshot());
            PrometheusText p = scrape(metrics);
            long prompt = first.stream().mapToLong(Request::promptLength).sum();
            long generated = first.stream().mapToLong(Request::numOutputTokens).sum();
            assertThat(p.value("vllm:prompt_tokens_total", "model_name", M)).isEqualTo(prompt);
            assertThat(p.value("vllm:generation_tokens_total", "model_name", M)).isEqualTo(generated);
            assertThat(p.value("vllm:prefix_cache_queries_total", "model_name", M)).isEqualTo(prompt);
            long stops = first.stream().filter(r -> r.finishReason() == FinishReason.STOP).count();
            assertThat(p.value("vllm:request_success_total", "model_name", M, "finished_reason", "stop")).isEqualTo(stops);
            assertThat(p.value("vllm:request_success_total", "model_name", M, "finished_reason", "length")).isEqualTo(first.size() - stops);
            assertThat(p.value("vllm:num_requests_running", "model_name", M)).isZero();
            assertThat(p.value("vllm:num_requests_waiting", "model_name", M)).isZero();
            OffloadStats.Transfers stored = e.offload().stats().stores().get("host");
            assertThat(stored.bytes()).isPositive();
            assertThat(p.value("vllm:kv_offload_total_bytes_total", "model_name", M, "transfer_type", "GPU_to_CPU")).isEqualTo(stored.bytes());
            assertThat(p.value("vllm:kv_offload_total_time_total", "model_name", M, "transfer_type", "GPU_to_CPU"))
                    .isEqualTo(stored.nanos() / 1e9);
            assertThat(p.value("kvtier:transfer_jobs_total", "model_name", M, "transfer_type", "GPU_to_CPU")).isEqualTo(stored.jobs());
            assertThat(p.value("vllm:kv_offload_total_bytes_total", "model_name", M, "transfer_type", "CPU_to_GPU"))
                    .as("a tier's series exists at 0 before its first load").isZero();
            assertThat(p.value("kvtier:blocks_loaded_total", "model_name", M, "tier", "host")).isZero();
            int used = e.offload().host().capacity() - e.offload().host().index().freeSlots();
            assertThat(used).isPositive();
            assertThat(p.value("kvtier:tier_chunks_used", "model_name", M, "tier", "host")).isEqualTo(used);
            assertThat(p.value("vllm:kv_offload_cpu_cache_usage_perc", "model_name", M))
                    .isEqualTo((double) used / e.offload().host().capacity());
            assertThat(p.value("kvtier:device_blocks_cached", "model_name", M)).isEqualTo(e.pool().cachedCount()).isPositive();
            assertThat(p.value("kvtier:blocks_stored_total", "model_name", M, "tier", "host")).isEqualTo(e.offload().stats().blocksStored().get("host").doubleValue());
            assertThat(p.value("kvtier:load_failures_total", "model_name", M)).isZero();
            assertThat(p.value("kvtier:disk_scan_done", "model_name", M)).isEqualTo(1);

            e.resetDevicePrefixCache();
            List<Request> second = TestEngines.runRecords(e, 1000);
            metrics.update(e.snapshot());
            PrometheusText q = scrape(metrics);
            long external = second.stream().mapToLong(r -> r.externalHitTokens().values().stream().mapToInt(Integer::intValue).sum()).sum();
            assertThat(external).as("tokens loaded from the host tier in the second round").isPositive();
            assertThat(q.value("vllm:external_prefix_cache_hits_total", "model_name", M)).isEqualTo(external);
            assertThat(q.value("vllm:prefix_cache_queries_total", "model_name", M)).isEqualTo(2 * prompt);
            long deviceHits = first.stream().mapToLong(Request::deviceHitTokens).sum()
                    + second.stream().mapToLong(Request::deviceHitTokens).sum();
            assertThat(q.value("vllm:prefix_cache_hits_total", "model_name", M)).isEqualTo(deviceHits);
            assertThat(q.value("vllm:external_prefix_cache_queries_total", "model_name", M))
                    .isEqualTo(2 * prompt - deviceHits);
            OffloadStats.Transfers loaded = e.offload().stats().loads().get("host");
            assertThat(q.value("vllm:kv_offload_total_bytes_total", "model_name", M, "transfer_type", "CPU_to_GPU"))
                    .isEqualTo(loaded.bytes()).isPositive();
            assertThat(q.value("kvtier:blocks_loaded_total", "model_name", M, "tier", "host")).isPositive();
            assertThat(q.samples().stream().filter(x -> x.name().startsWith("kvtier:group_")).toList())
                    .as("a one-group model has no per-group series").isEmpty();
        }
    }

    /**
     * The gemma3 fixture (group 0 full attention, group 1 a window of 16 over five layers), each
     * prompt alone twice with the device cache dropped (prefill chunk 512: the numbers of
     * Gemma3OffloadTest): the offload series count both groups' blocks and bytes (33 + 5 blocks
     * stored, 29 + 2 loaded; 4,096 B a full block, 20,480 B a window block), hits once, and the
     * {@code kvtier:group_*} series give each group's part.
     */
    @Test
    void aModelWithTwoKvGroupsCountsBothGroupsAndShowsEach(@TempDir Path tmp) {
        Path folder = LlamaCppReference.folder();
        List<LlamaCppReference> refs = LlamaCppReference.load(folder.resolve("gemma3-spm515-f32.ref.jsonl"));
        EngineConfig config = EngineConfig.of(16, 64).withMaxBatchTokens(512).withStopToken(-1);
        try (Engine e = LlamaRunner.engine(Models.load(folder.resolve("gemma3-spm515-f32.gguf"), new DigestCache(tmp)), config,
                Kernels.best(), 2, new OffloadSetup(16L << 20, 0, "lru", OffloadConfig.DEFAULT))) {
            ServeMetrics metrics = new ServeMetrics(M, e.snapshot());
            for (int pass = 0; pass < 2; pass++) {
                for (int i = 0; i < refs.size(); i++) {
                    e.resetDevicePrefixCache();
                    Request r = new Request(10L * pass + i, refs.get(i).promptIds(), 32, SamplingParams.GREEDY, ExtraKeys.NONE);
                    e.submit(r);
                    e.runToCompletion();
                    e.drainTransfers();
                    assertThat(r.outputIds()).containsExactly(refs.get(i).generatedIds());
                }
            }
            metrics.update(e.snapshot());
            PrometheusText p = scrape(metrics);
            assertThat(p.value("kvtier:blocks_stored_total", "model_name", M, "tier", "host")).isEqualTo(38);
            assertThat(p.value("kvtier:group_blocks_stored_total", "model_name", M, "tier", "host", "group", "0")).isEqualTo(33);
            assertThat(p.value("kvtier:group_blocks_stored_total", "model_name", M, "tier", "host", "group", "1")).isEqualTo(5);
            assertThat(p.value("kvtier:blocks_loaded_total", "model_name", M, "tier", "host")).isEqualTo(31);
            assertThat(p.value("kvtier:group_blocks_loaded_total", "model_name", M, "tier", "host", "group", "1")).isEqualTo(2);
            assertThat(p.value("vllm:kv_offload_total_bytes_total", "model_name", M, "transfer_type", "GPU_to_CPU"))
                    .isEqualTo(33 * 4_096 + 5 * 20_480);
            assertThat(p.value("vllm:kv_offload_total_bytes_total", "model_name", M, "transfer_type", "CPU_to_GPU"))
                    .isEqualTo(29 * 4_096 + 2 * 20_480);
            assertThat(p.value("kvtier:group_offload_bytes_total", "model_name", M, "transfer_type", "CPU_to_GPU", "group", "0"))
                    .isEqualTo(29 * 4_096);
            assertThat(p.value("kvtier:group_offload_bytes_total", "model_name", M, "transfer_type", "CPU_to_GPU", "group", "1"))
                    .isEqualTo(2 * 20_480);
            assertThat(p.value("kvtier:external_hit_tokens_total", "model_name", M, "tier", "host")).isEqualTo(48 + 416);
            assertThat(p.value("kvtier:tier_chunks_used", "model_name", M, "tier", "host")).isEqualTo(38);
        }
    }

    @Test
    void requestTimersFillTheLatencyHistograms() {
        try (Engine e = TestEngines.engine(64, 1L << 20, null)) {
            ServeMetrics metrics = new ServeMetrics(M, e.snapshot());
            ServeMetrics.RequestTimer a = metrics.startRequest();
            a.token();
            a.token();
            a.token();
            a.finish();
            a.finish(); // counted once
            ServeMetrics.RequestTimer b = metrics.startRequest();
            b.token();
            PrometheusText p = scrape(metrics);
            assertThat(p.value("vllm:time_to_first_token_seconds_count", "model_name", M)).isEqualTo(2);
            assertThat(p.value("vllm:inter_token_latency_seconds_count", "model_name", M)).isEqualTo(2);
            assertThat(p.value("vllm:e2e_request_latency_seconds_count", "model_name", M)).isEqualTo(1);
            assertThat(p.value("vllm:time_to_first_token_seconds_bucket", "model_name", M, "le", "+Inf")).isEqualTo(2);
            assertThat(p.value("vllm:time_to_first_token_seconds_sum", "model_name", M)).isPositive();
            assertThat(p.types()).containsEntry("vllm:time_to_first_token_seconds", "histogram")
                    .containsEntry("vllm:prompt_tokens_total", "counter").containsEntry("vllm:num_requests_running", "gauge");
        }
    }

    @Test
    void theTextFormatKeepsVllmsColonNames() {
        try (Engine e = TestEngines.engine(64, 1L << 20, null)) {
            String text = new String(new ServeMetrics(M, e.snapshot()).scrape(), StandardCharsets.UTF_8);
            assertThat(text).contains("# TYPE vllm:prompt_tokens_total counter\n")
                    .contains("vllm:prompt_tokens_total{model_name=\"stories260K\"} 0")
                    .contains("# TYPE kvtier:load_failures_total counter\n");
            assertThat(new ServeMetrics(M, e.snapshot()).contentType()).startsWith("text/plain; version=0.0.4");
        }
    }

    private static PrometheusText scrape(ServeMetrics m) {
        return PrometheusText.parse(new String(m.scrape(), StandardCharsets.UTF_8));
    }
}

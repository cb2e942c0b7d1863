package io.kvtier.telemetry;

import io.kvtier.engine.EngineSnapshot;
import io.kvtier.offload.OffloadStats;
import io.prometheus.metrics.config.EscapingScheme;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.ToDoubleFunction;

/**
 * The server's Prometheus metrics, named as vLLM names them ({@code vllm:...}) so existing
 * dashboards work, plus kvtier's own ({@code kvtier:...}); every series carries {@code model_name}.
 * The README's metrics table lists each one.
 *
 * <p>One source: the counters and gauges are read from the last {@link EngineSnapshot} the engine
 * loop handed to {@link #update} (an immutable copy of {@code EngineStats}, {@code OffloadStats},
 * the scheduler's queues and the tiers' usage, taken on the engine thread after a step). A scrape
 * never touches the engine. The latency histograms are observed by {@link RequestTimer}s, one per
 * request, from the thread that delivers the request's tokens.
 *
 * <p>Thread-safe: {@link #update} from the engine thread, {@link #scrape} and timers from any.
 */
public final class ServeMetrics {

    /** vLLM's TTFT buckets (seconds). */
    private static final double[] TTFT_BUCKETS = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75,
            1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0};
    /** vLLM's inter-token buckets, with three finer ones below 10 ms for the small models here. */
    private static final double[] ITL_BUCKETS = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3,
            0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0};
    /** vLLM's end-to-end buckets, with three finer ones below 0.3 s. */
    private static final double[] E2E_BUCKETS = {0.05, 0.1, 0.2, 0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0,
            20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};

    /** The model_name label. */
    public static final String MODEL = "model_name";

    private final String modelName;
    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final PrometheusTextFormatWriter writer = PrometheusTextFormatWriter.create();
    private final Histogram ttft;
    private final Histogram interToken;
    private final Histogram e2e;
    private volatile EngineSnapshot snapshot;

    /**
     * @param modelName the {@code model_name} label of every series (the served model's id)
     * @param initial   the engine's state before the first step
     */
    public ServeMetrics(String modelName, EngineSnapshot initial) {
        this(modelName, initial, "");
    }

    /**
     * @param diskRoomNote what {@code generate}'s summary says after the disk tier's capacity, as of the
     *                     start: {@code " (the filesystem holds about N)"} when its budget is more than
     *                     the filesystem holds, else ""; {@code kvtier:tier_chunks_capacity}'s HELP says it
     */
    public ServeMetrics(String modelName, EngineSnapshot initial, String diskRoomNote) {
        this.modelName = Objects.requireNonNull(modelName, "modelName");
        this.snapshot = Objects.requireNonNull(initial, "initial");
        registerScheduler();
        registerTokens();
        registerOffload(Objects.requireNonNull(diskRoomNote, "diskRoomNote"));
        if (initial.offload() != null && !initial.offload().groups().isEmpty()) {
            registerGroups(); // a model with several KV groups: the totals above, and each group's part
        }
        RemoteMetrics.register(this);
        ttft = histogram("vllm:time_to_first_token_seconds", "Time from a request's arrival to its first token, in seconds.", TTFT_BUCKETS);
        interToken = histogram("vllm:inter_token_latency_seconds", "Time between two tokens of one request, in seconds.", ITL_BUCKETS);
        e2e = histogram("vllm:e2e_request_latency_seconds", "Time from a request's arrival to its last token, in seconds.", E2E_BUCKETS);
    }

    /** Takes the engine's state after a step (engine thread); scrapes from now on report it. */
    public void update(EngineSnapshot s) {
        snapshot = Objects.requireNonNull(s, "snapshot");
    }

    /** The last snapshot handed to {@link #update}. */
    public EngineSnapshot snapshot() {
        return snapshot;
    }

    /** A timer for a request that arrived now. */
    public RequestTimer startRequest() {
        return new RequestTimer(System.nanoTime());
    }

    /** The Content-Type of {@link #scrape()}: Prometheus text format 0.0.4. */
    public String contentType() {
        return writer.getContentType();
    }

    /**
     * Every series in Prometheus text format (names keep their colons: legal in the text format, and
     * written unchanged by the library's writer with its legacy underscore escaping).
     */
    public byte[] scrape() {
        ByteArrayOutputStream out = new ByteArrayOutputStream(16 * 1024);
        try {
            writer.write(out, registry.scrape(), EscapingScheme.UNDERSCORE_ESCAPING);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a ByteArrayOutputStream does not throw
        }
        return out.toByteArray();
    }

    /**
     * Latencies of one request: {@link #token()} at each token delivered, {@link #finish()} at its
     * end. The first token observes TTFT, each later one the time since the previous token.
     * Called from one thread at a time (the request's sink).
     */
    public final class RequestTimer {
        private final long arrival;
        private long last = -1;
        private boolean finished;

        private RequestTimer(long arrivalNanos) {
            this.arrival = arrivalNanos;
        }

        /** A token was delivered now. */
        public void token() {
            long now = System.nanoTime();
            if (last < 0) {
                ttft.labelValues(modelName).observe((now - arrival) / 1e9);
            } else {
                interToken.labelValues(modelName).observe((now - last) / 1e9);
            }
            last = now;
        }

        /** The request ended now (finished, aborted or failed); counted once. */
        public void finish() {
            if (!finished) {
                finished = true;
                e2e.labelValues(modelName).observe((System.nanoTime() - arrival) / 1e9);
            }
        }
    }

    private void registerScheduler() {
        gauge("vllm:num_requests_running", "Requests admitted and computing.", s -> s.running());
        gauge("vllm:num_requests_waiting", "Requests waiting for admission or for a load from an offload tier.", s -> s.waiting());
        gauge("vllm:kv_cache_usage_perc", "Fraction of device KV blocks in use (1 = all; cached free blocks count as free).",
                s -> 1.0 - (double) s.deviceBlocksFree() / s.deviceBlocks());
        gauge("kvtier:device_blocks_cached", "Device blocks registered in the device prefix cache (in use or free).",
                s -> s.deviceBlocksCached());
        counter("vllm:num_preemptions", "Preemptions (a request's blocks released to make room; it is recomputed or reloaded).",
                s -> s.engine().preemptions());
        counter("kvtier:engine_steps", "Engine steps that ran a forward pass.", s -> s.engine().steps());
        labelledCounter("vllm:request_success", "Finished requests per finish reason (stop, length, abort).", "finished_reason",
                (s, out) -> s.engine().finishedBy().forEach((r, n) -> out.accept(r.wireName(), n.doubleValue())));
    }

    private void registerTokens() {
        counter("vllm:prompt_tokens", "Prompt tokens of submitted requests.", s -> s.engine().promptTokens());
        counter("vllm:generation_tokens", "Generated tokens.", s -> s.engine().generatedTokens());
        counter("vllm:prefix_cache_queries", "Prompt tokens looked up in the device prefix cache (counted when a request finishes).",
                s -> s.engine().queriedTokens());
        counter("vllm:prefix_cache_hits", "Prompt tokens found in the device prefix cache (counted when a request finishes).",
                s -> s.engine().deviceHitTokens());
        counter("vllm:external_prefix_cache_queries",
                "Prompt tokens looked up in the offload tiers: those the device did not hold (counted when a request finishes).",
                s -> s.engine().externalQueriedTokens());
        counter("vllm:external_prefix_cache_hits", "Prompt tokens loaded from the offload tiers at a request's first admission, not its reloads "
                        + "after preemptions (counted when a request finishes).",
                s -> s.engine().externalHitTokens());
    }

    private void registerOffload(String diskRoomNote) {
        labelledCounter("vllm:kv_offload_total_bytes", "Payload bytes moved by transfer jobs, per transfer type.", "transfer_type",
                (s, out) -> transfers(s, (type, t) -> out.accept(type, (double) t.bytes())));
        labelledCounter("vllm:kv_offload_total_time", "Time transfer jobs took, in seconds, per transfer type.", "transfer_type",
                (s, out) -> transfers(s, (type, t) -> out.accept(type, t.nanos() / 1e9)));
        labelledCounter("kvtier:transfer_jobs", "Transfer jobs that ended, successful or not, per transfer type.", "transfer_type",
                (s, out) -> transfers(s, (type, t) -> out.accept(type, (double) t.jobs())));
        gauge("vllm:kv_offload_cpu_cache_usage_perc", "Fraction of host-tier chunk slots in use.",
                s -> s.offload() == null ? 0 : usage(s.offload().tiers().getFirst()));
        labelledGauge("kvtier:tier_usage_perc", "Fraction of an offload tier's chunk slots in use.", "tier",
                (s, out) -> tiers(s, u -> out.accept(u.tier(), usage(u))));
        labelledGauge("kvtier:tier_chunks_used", "Chunk slots in use in an offload tier.", "tier",
                (s, out) -> tiers(s, u -> out.accept(u.tier(), (double) u.used())));
        // The disk tier's slots are its budget's: beyond the filesystem's room, it says what the filesystem holds.
        labelledGauge("kvtier:tier_chunks_capacity", "Chunk slots of an offload tier." + (diskRoomNote.isEmpty() ? ""
                : " The disk tier's are its --disk-cache-bytes budget's" + diskRoomNote + "."), "tier",
                (s, out) -> tiers(s, u -> out.accept(u.tier(), (double) u.capacity())));
        labelledCounter("kvtier:blocks_stored", "Device blocks written to an offload tier by completed stores.", "tier",
                (s, out) -> perTier(s, EngineSnapshot.Offload::blocksStored, out));
        labelledCounter("kvtier:external_hit_tokens", "Prompt tokens loaded from an offload tier, per tier the hit came from "
                + "(counted when a request finishes, its first admission's: they sum to vllm:external_prefix_cache_hits).", "tier",
                (s, out) -> perTier(s, o -> s.engine().externalHitTokensByTier(), out));
        labelledCounter("kvtier:blocks_loaded", "Blocks filled from an offload tier by completed loads (disk: promoted into the host tier).",
                "tier", (s, out) -> perTier(s, EngineSnapshot.Offload::blocksLoaded, out));
        counter("kvtier:load_failures", "Loads that failed (bad checksum, header mismatch, transfer error or deadline).",
                s -> s.offload() == null ? 0 : s.offload().loadFailures());
        counter("kvtier:store_failures", "Stores that failed after a tier accepted them (disk writes included).",
                s -> s.offload() == null ? 0 : s.offload().storeFailures());
        counter("kvtier:store_refusals", "Stores a tier refused for lack of space (retried at the request's next step).",
                s -> s.offload() == null ? 0 : s.offload().storeRefusals());
        counter("kvtier:jobs_timed_out", "Transfer jobs failed by their deadline.", s -> s.offload() == null ? 0 : s.offload().jobsTimedOut());
        gauge("kvtier:disk_scan_files_listed", "Chunk files the disk tier's restart scan listed so far.",
                s -> scan(s) == null ? 0 : scan(s).filesListed());
        gauge("kvtier:disk_scan_files_scanned", "Chunk files whose headers the restart scan read so far.",
                s -> scan(s) == null ? 0 : scan(s).filesScanned());
        gauge("kvtier:disk_scan_chunks_found", "Chunks the restart scan found usable so far.",
                s -> scan(s) == null ? 0 : scan(s).chunksFound());
        gauge("kvtier:disk_scan_done", "1 once the restart scan has ended (or without a disk tier), else 0.",
                s -> scan(s) == null || scan(s).ended() ? 1 : 0);
    }

    /**
     * Each KV group's share of the offload counters (the series above sum them over the groups),
     * labelled {@code group} (0 = full attention; docs/kv-groups.md). Registered only for a model
     * with several groups.
     */
    private void registerGroups() {
        groupCounter("kvtier:group_blocks_stored", "Device blocks of one KV group written to an offload tier by completed stores.",
                "tier", (g, out) -> g.blocksStored().forEach((tier, n) -> out.accept(tier, n.doubleValue())));
        groupCounter("kvtier:group_blocks_loaded", "Blocks of one KV group filled from an offload tier by completed loads.",
                "tier", (g, out) -> g.blocksLoaded().forEach((tier, n) -> out.accept(tier, n.doubleValue())));
        groupCounter("kvtier:group_offload_bytes", "Payload bytes of one KV group moved by transfer jobs, per transfer type.",
                "transfer_type", (g, out) -> transfers(g, (type, t) -> out.accept(type, (double) t.bytes())));
    }

    /** A counter labelled {@code label} and {@code group}, one series per group of the snapshot's offload. */
    private void groupCounter(String name, String help, String label,
                              BiConsumer<EngineSnapshot.Offload, BiConsumer<String, Double>> values) {
        CounterWithCallback.builder().name(name).help(help).labelNames(MODEL, label, "group")
                .callback(cb -> {
                    EngineSnapshot s = snapshot;
                    if (s.offload() == null) {
                        return;
                    }
                    java.util.List<EngineSnapshot.Offload> groups = s.offload().groups();
                    for (int g = 0; g < groups.size(); g++) {
                        String group = Integer.toString(g);
                        values.accept(groups.get(g), (v, x) -> cb.call(x, modelName, v, group));
                    }
                }).register(registry);
    }

    /** vLLM's transfer types: device = GPU, host = CPU, disk = STORAGE. */
    private static void transfers(EngineSnapshot s, BiConsumer<String, OffloadStats.Transfers> out) {
        if (s.offload() != null) {
            transfers(s.offload(), out);
        }
    }

    private static void transfers(EngineSnapshot.Offload o, BiConsumer<String, OffloadStats.Transfers> out) {
        for (String tier : tierNames(o)) {
            out.accept(tier.equals("host") ? "GPU_to_CPU" : "CPU_to_" + Media.of(tier), o.stores().getOrDefault(tier, NO_TRANSFERS));
            out.accept(tier.equals("host") ? "CPU_to_GPU" : Media.of(tier) + "_to_CPU", o.loads().getOrDefault(tier, NO_TRANSFERS));
        }
    }

    private static final OffloadStats.Transfers NO_TRANSFERS = new OffloadStats.Transfers(0, 0, 0);

    /**
     * Every tier the engine has, whether or not it has moved anything yet: each labelled series
     * exists from the first scrape at 0, so a dashboard's rate() and a client's before/after
     * difference see 0 rather than an absent series (Prometheus' advice for known label values).
     */
    private static Set<String> tierNames(EngineSnapshot.Offload o) {
        Set<String> names = new LinkedHashSet<>();
        o.tiers().forEach(u -> names.add(u.tier()));
        if (o.remote() != null) {
            names.add("remote");
        }
        names.addAll(o.stores().keySet());
        names.addAll(o.loads().keySet());
        return names;
    }

    private static void tiers(EngineSnapshot s, Consumer<EngineSnapshot.TierUsage> out) {
        if (s.offload() != null) {
            s.offload().tiers().forEach(out);
        }
    }

    private static void perTier(EngineSnapshot s, java.util.function.Function<EngineSnapshot.Offload, Map<String, Long>> m,
                                BiConsumer<String, Double> out) {
        if (s.offload() != null) {
            Map<String, Long> values = m.apply(s.offload());
            Set<String> names = tierNames(s.offload());
            names.addAll(values.keySet());
            for (String tier : names) {
                out.accept(tier, values.getOrDefault(tier, 0L).doubleValue());
            }
        }
    }

    private static double usage(EngineSnapshot.TierUsage u) {
        return (double) u.used() / u.capacity();
    }

    private static io.kvtier.tier.disk.DiskIndexScan.Progress scan(EngineSnapshot s) {
        return s.offload() == null ? null : s.offload().diskScan();
    }

    void gauge(String name, String help, ToDoubleFunction<EngineSnapshot> value) {
        GaugeWithCallback.builder().name(name).help(help).labelNames(MODEL)
                .callback(cb -> cb.call(value.applyAsDouble(snapshot), modelName)).register(registry);
    }

    void counter(String name, String help, ToDoubleFunction<EngineSnapshot> value) {
        CounterWithCallback.builder().name(name).help(help).labelNames(MODEL)
                .callback(cb -> cb.call(value.applyAsDouble(snapshot), modelName)).register(registry);
    }

    void labelledGauge(String name, String help, String label, BiConsumer<EngineSnapshot, BiConsumer<String, Double>> values) {
        GaugeWithCallback.builder().name(name).help(help).labelNames(MODEL, label)
                .callback(cb -> values.accept(snapshot, (v, x) -> cb.call(x, modelName, v))).register(registry);
    }

    void labelledCounter(String name, String help, String label, BiConsumer<EngineSnapshot, BiConsumer<String, Double>> values) {
        CounterWithCallback.builder().name(name).help(help).labelNames(MODEL, label)
                .callback(cb -> values.accept(snapshot, (v, x) -> cb.call(x, modelName, v))).register(registry);
    }

    private Histogram histogram(String name, String help, double[] buckets) {
        return Histogram.builder().name(name).help(help).labelNames(MODEL).classicOnly()
                .classicUpperBounds(buckets).register(registry);
    }
}

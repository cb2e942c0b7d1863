package io.kvtier.replay;

import io.kvtier.offload.OffloadStats;
import io.kvtier.text.Plural;
import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A replay's results as a table (stdout) and as one record ({@link #toJson}) that the JSON and
 * CSV files are both written from (the CLI's {@code StatsFiles}), so they carry the same fields.
 */
public final class ReplayReport {

    private ReplayReport() {
    }

    /** Writes the human-readable table. */
    public static void printTable(PrintStream out, ReplayResult r) {
        ReplayConfig c = r.config();
        int bs = c.blockSize();
        out.printf(Locale.ROOT, "replay %s: %s, %s; mode %s, policy %s, block %s%n", r.traceLabel(),
                Plural.grouped(r.requests(), "request"), Plural.grouped(r.promptTokens(), "prompt token"), c.mode().cliName(),
                c.policy(), Plural.count(bs, "token"));
        out.printf(Locale.ROOT, "  simulated model: %s%n", c.cost().describe());
        out.printf(Locale.ROOT, "  %-7s %-38s %14s %9s %16s%n", "tier", "capacity (tokens)", "hit tokens", "hit ratio",
                "chunks written");
        out.printf(Locale.ROOT, "  %-7s %-38s %,14d %9.4f %,16d  (loads into the device, reloads of preempted requests included)%n", "device",
                capacity(c.device(), (long) r.deviceBlocks() * bs, Plural.grouped(r.deviceBlocks(), "block")), r.deviceHitTokens(),
                r.ratio(r.deviceHitTokens()), r.deviceChunksLoaded());
        out.printf(Locale.ROOT, "  %-7s %-38s %,14d %9.4f %,16d  (stores into the host)%n", "host",
                r.hostChunks() == 0 ? "0 (off)" : capacity(c.host(), (long) r.hostChunks() * bs, Plural.grouped(r.hostChunks(), "chunk")),
                r.hostHitTokens(), r.ratio(r.hostHitTokens()), r.hostChunksWritten());
        if (r.diskChunks() > 0) {
            out.printf(Locale.ROOT, "  %-7s %-38s %,14d %9.4f %,16d  (stores into the disk, through the host)%n", "disk",
                    capacity(c.disk(), (long) r.diskChunks() * bs, Plural.grouped(r.diskChunks(), "chunk")),
                    r.diskHitTokens(), r.ratio(r.diskHitTokens()), r.diskChunksWritten());
        }
        if (r.remote() != null) {
            long cap = r.remote().capacityChunks();
            out.printf(Locale.ROOT, "  %-7s %-38s %,14d %9.4f %,16d  (writes into the store, through the host; %s)%n",
                    "remote", cap == Long.MAX_VALUE ? "inf" : capacity(c.remote().capacity(), cap * bs,
                            Plural.grouped(cap, "chunk")),
                    r.remote().hitTokens(), r.ratio(r.remote().hitTokens()), r.remote().chunksWritten(),
                    Double.isFinite(r.remoteWritesPerHit()) ? String.format(Locale.ROOT, "%,.2f per chunk hit", r.remoteWritesPerHit())
                            : "no chunk hit");
        }
        out.printf(Locale.ROOT, "  %-7s %-38s %,14d %9.4f%n", "total", "", r.hitTokens(), r.tokenHitRatio());
        if (r.optimum() != null) {
            out.printf(Locale.ROOT, "  optimum (Belady at %s = device + host" + (r.diskChunks() > 0 ? " + disk" : "")
                            + (r.remote() == null ? "" : r.optimum().remoteCappedAt() < 0 ? " + remote"
                                    : " + remote capped at the trace's " + Plural.grouped(r.optimum().remoteCappedAt(), "distinct chunk"))
                            + "): %.4f; this policy reaches %.3f of it%n",
                    Plural.grouped(r.optimum().capacityChunks(), "chunk"), r.optimumTokenHitRatio(), r.fractionOfOptimum());
            // A ceiling of 0 (no full prompt block recurs: nothing can hit) has no fractions.
            out.printf(Locale.ROOT, "  ceiling (unbounded cache): %.4f; %s%n", r.ceilingTokenHitRatio(),
                    r.optimum().ceilingHitTokens() == 0 ? "optimum/ceiling and policy/ceiling n/a (no full prompt block recurs)"
                            : String.format(Locale.ROOT, "optimum/ceiling %.3f, policy/ceiling %.3f",
                                    r.optimumTokenHitRatio() / r.ceilingTokenHitRatio(), r.tokenHitRatio() / r.ceilingTokenHitRatio()));
        } else if (c.mode() == ReplayConfig.Mode.INSTANT) {
            out.printf("  optimum: not computed (the references work on the trace's 512-token blocks; block size is %d)%n", bs);
        }
        out.printf(Locale.ROOT, "  bytes moved: device->host %s, host->device %s (at %,d B/token); host evictions %,d, "
                        + "store refusals %,d, preemptions %,d%n", bytes(r.bytesStored()), bytes(r.bytesLoaded()),
                c.cost().kvBytesPerToken(), r.hostEvictions(), r.storeRefusals(), r.preemptions());
        if (c.storePolicy().lazy() || c.loadPolicy() != io.kvtier.offload.LoadPolicy.ALWAYS || !r.blocksNotStored().isEmpty()) {
            out.printf(Locale.ROOT, "  stores %s, loads %s; blocks not stored by reason: %s%n", c.storePolicy(),
                    c.loadPolicy(), io.kvtier.text.Counts.nonZero(r.blocksNotStored()));
        }
        if (c.loadPolicy() != io.kvtier.offload.LoadPolicy.ALWAYS && r.loadDecisions() != null) {
            var d = r.loadDecisions();
            out.printf(Locale.ROOT, "  load or recompute: %,d hits decided, %,d recomputed whole, %,d cut, %,d waited for device blocks, "
                    + "%,d recomputed when blocks were short, %,d hit tokens recomputed; load bandwidth %s, prefill %s%n", d.decided(),
                    d.recomputed(), d.cut(), d.waited(), d.recomputedWhenShort(), d.tokensRecomputed(),
                    bandwidths(d.bandwidth()), Double.isNaN(d.prefillTokensPerSecond()) ? "not measured"
                            : String.format(Locale.ROOT, "%,.0f tokens/s", d.prefillTokensPerSecond()));
        }
        ReplayResult.Timing t = r.timing();
        if (t != null) {
            out.printf(Locale.ROOT, "  timed (speedup %s): makespan %,.1f s, %s, %s (at least 1 a request: the prefill samples "
                            + "the first) = %,.0f tokens/s, %,.3f requests/s%n", plain(c.speedup()), t.makespanSeconds(),
                    Plural.grouped(t.steps(), "step"), Plural.grouped(r.outputTokens(), "output token"),
                    r.outputTokens() / t.makespanSeconds(), r.requests() / t.makespanSeconds());
            percentiles(out, t);
            out.printf(Locale.ROOT, "  waiting requests: max %,d, mean %.1f over steps; GPU busy %.1f%%, PCIe device->host "
                            + "%.1f%%, host->device %.1f%%%n", t.maxWaiting(), t.meanWaiting(), 100 * t.gpuBusy(),
                    100 * t.storeLaneBusy(), 100 * t.loadLaneBusy());
            if (queueingDominates(t)) {
                out.printf(Locale.ROOT, "  note: the simulated GPU was busy %.0f%% of the time: this trace's load exceeds one "
                        + "GPU at speedup %s, so latencies are mostly queueing; try a lower --speedup%n", 100 * t.gpuBusy(),
                        plain(c.speedup()));
            }
        }
        out.printf(Locale.ROOT, "  replay took %,.1f s%n", r.wallSeconds());
    }

    /**
     * Whether latencies are mostly waiting for the GPU: it was busy nearly all the time and requests
     * spent more than half their end-to-end time queued. A lone request keeps the GPU busy too,
     * without any queue.
     */
    static boolean queueingDominates(ReplayResult.Timing t) {
        return t.gpuBusy() > 0.98 && t.queue().mean() > 0.5 * t.e2e().mean();
    }

    /**
     * The timed replay's latency table. Its columns are as wide as the widest figure (at least 10):
     * a long trace's end-to-end seconds (2,510,294.400) overflowed a fixed width and ran together.
     */
    private static void percentiles(PrintStream out, ReplayResult.Timing t) {
        String[] names = {"TTFT", "end-to-end", "queue (arrival to 1st pass)"};
        ReplayResult.Percentiles[] rows = {t.ttft(), t.e2e(), t.queue()};
        String[][] cells = new String[rows.length][];
        int width = 10;
        for (int i = 0; i < rows.length; i++) {
            ReplayResult.Percentiles p = rows[i];
            cells[i] = new String[] {names[i], seconds(p.p50()), seconds(p.p90()), seconds(p.p99()), seconds(p.mean()),
                    seconds(p.max())};
            for (int j = 1; j < cells[i].length; j++) {
                width = Math.max(width, cells[i][j].length());
            }
        }
        String line = "  %-28s" + (" %" + width + "s").repeat(5) + "%n";
        out.printf(Locale.ROOT, line, "seconds", "p50", "p90", "p99", "mean", "max");
        for (String[] row : cells) {
            out.printf(Locale.ROOT, line, (Object[]) row);
        }
    }

    private static String seconds(double s) {
        return String.format(Locale.ROOT, "%,.3f", s);
    }

    private static String capacity(Capacity asked, long tokens, String units) {
        String a = asked.kind() == Capacity.Kind.TOKENS ? String.format(Locale.ROOT, "%,d", tokens) : asked + " = "
                + String.format(Locale.ROOT, "%,d", tokens);
        return a + " (" + units + ")";
    }

    /** Each tier's measured load bandwidth in GB/s (as the cost model's), e.g. {@code host 49.90 GB/s}, or {@code not measured}. */
    static String bandwidths(Map<String, Double> byTier) {
        if (byTier.isEmpty()) {
            return "not measured";
        }
        StringBuilder sb = new StringBuilder();
        byTier.forEach((k, v) -> sb.append(sb.isEmpty() ? "" : ", ").append(k)
                .append(String.format(Locale.ROOT, " %,.2f GB/s", v / 1e9)));
        return sb.toString();
    }

    /** A number as typed, never in scientific notation ({@code 0.0001}, {@code 2}, {@code 1.5}). */
    static String plain(double x) {
        return java.math.BigDecimal.valueOf(x).stripTrailingZeros().toPlainString();
    }

    /** Bytes with a binary unit, e.g. {@code 11.2 TiB}. */
    static String bytes(long b) {
        String[] units = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
        double v = b;
        int u = 0;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return u == 0 ? b + " B" : String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }

    /**
     * Load-or-recompute decisions as JSON fields (snake_case; the prefill speed null before it is
     * measured), for the replay record and generate's stats.
     */
    public static Map<String, Object> loadDecisionsJson(io.kvtier.offload.OffloadStats.LoadDecisions d) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("decided", d.decided());
        m.put("recomputed", d.recomputed());
        m.put("cut", d.cut());
        m.put("tokens_recomputed", d.tokensRecomputed());
        m.put("waited", d.waited());
        m.put("recomputed_when_short", d.recomputedWhenShort());
        // Fixed keys, 0 = not measured yet: every record of a sweep has the same CSV columns.
        Map<String, Double> bandwidth = new LinkedHashMap<>();
        for (String tier : List.of("host", "disk", "remote")) {
            bandwidth.put(tier, d.bandwidth().getOrDefault(tier, 0.0));
        }
        m.put("bandwidth", bandwidth);
        m.put("prefill_tokens_per_second", Double.isNaN(d.prefillTokensPerSecond()) ? 0.0 : d.prefillTokensPerSecond());
        return m;
    }

    /** The result as JSON fields, in a stable order. */
    public static Map<String, Object> toJson(ReplayResult r) {
        ReplayConfig c = r.config();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("trace", r.trace());
        m.put("trace_requests", r.traceRequests());
        m.put("mode", c.mode().cliName());
        m.put("eviction", c.policy().cliName()); // named as its flag, --eviction
        m.put("block_size", c.blockSize());
        m.put("device_tokens", (long) r.deviceBlocks() * c.blockSize());
        m.put("host_tokens", (long) r.hostChunks() * c.blockSize());
        m.put("host_capacity", c.host().toString());
        m.put("disk_tokens", (long) r.diskChunks() * c.blockSize());
        m.put("disk_capacity", c.disk().toString());
        if (r.remote() != null) {
            m.put("remote_capacity", c.remote().capacity().toString());
            m.put("remote_latency_us", c.remote().latencyNanos() / 1e3);
            m.put("remote_gbps", c.remote().bytesPerSecond() / 1e9);
            m.put("remote_jobs", r.remote().jobs());
            m.put("remote_evictions", r.remote().evictions());
            m.put("remote_writes_per_hit", r.remoteWritesPerHit());
        }
        m.put("max_tokens", c.maxTokens());
        m.put("cost_model", costModelJson(c.cost()));
        m.put("requests", r.requests());
        m.put("prompt_tokens", r.promptTokens());
        m.put("output_tokens", r.outputTokens());
        m.put("hit_tokens", r.hitTokens());
        m.put("token_hit_ratio", r.tokenHitRatio());
        m.put("hit_tokens_by_tier", r.hitTokensByTier());
        Map<String, Double> ratios = new LinkedHashMap<>();
        r.hitTokensByTier().forEach((k, v) -> ratios.put(k, r.ratio(v)));
        m.put("token_hit_ratio_by_tier", ratios);
        m.put("chunks_written_by_tier", r.chunksWrittenByTier());
        m.put("store_policy", c.storePolicy().toString());
        m.put("load_policy", c.loadPolicy().toString());
        // Every reason: the same CSV columns in a sweep and across runs.
        m.put("blocks_not_stored", OffloadStats.everyKey(OffloadStats.NOT_STORED_REASONS, r.blocksNotStored()));
        if (c.loadPolicy() != io.kvtier.offload.LoadPolicy.ALWAYS && r.loadDecisions() != null) {
            m.put("load_decisions", loadDecisionsJson(r.loadDecisions()));
        }
        m.put("host_evictions", r.hostEvictions());
        m.put("store_refusals", r.storeRefusals());
        m.put("bytes_stored", r.bytesStored());
        m.put("bytes_loaded", r.bytesLoaded());
        m.put("preemptions", r.preemptions());
        if (r.optimum() != null) {
            m.put("optimum_capacity_chunks", r.optimum().capacityChunks());
            m.put("optimum_hit_tokens", r.optimum().beladyHitTokens());
            m.put("optimum_token_hit_ratio", r.optimumTokenHitRatio());
            m.put("ceiling_hit_tokens", r.optimum().ceilingHitTokens());
            m.put("ceiling_token_hit_ratio", r.ceilingTokenHitRatio());
            m.put("fraction_of_optimum", r.fractionOfOptimum());
        }
        ReplayResult.Timing t = r.timing();
        if (t != null) {
            m.put("speedup", c.speedup());
            m.put("makespan_s", t.makespanSeconds());
            m.put("steps", t.steps());
            m.put("output_tokens_per_s", r.outputTokens() / t.makespanSeconds());
            m.put("requests_per_s", r.requests() / t.makespanSeconds());
            m.put("ttft_s", t.ttft());
            m.put("e2e_s", t.e2e());
            m.put("queue_s", t.queue());
            m.put("max_waiting", t.maxWaiting());
            m.put("mean_waiting", t.meanWaiting());
            m.put("gpu_busy", t.gpuBusy());
            m.put("pcie_store_busy", t.storeLaneBusy());
            m.put("pcie_load_busy", t.loadLaneBusy());
        }
        m.put("wall_s", r.wallSeconds());
        return m;
    }

    /** The cost model's parameters in the report's snake_case, units in the names. */
    static Map<String, Object> costModelJson(io.kvtier.replay.sim.CostModel k) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", k.name());
        m.put("kv_bytes_per_token", k.kvBytesPerToken());
        m.put("linear_ns_per_token", k.linearNanosPerToken());
        m.put("attention_ns_per_pair", k.attentionNanosPerPair());
        m.put("weight_read_ns", k.weightReadNanos());
        m.put("kv_read_ns_per_token", k.kvReadNanosPerToken());
        m.put("step_overhead_ns", k.stepOverheadNanos());
        m.put("host_bytes_per_s", k.hostBytesPerSecond());
        m.put("host_latency_ns", k.hostLatencyNanos());
        m.put("context_tokens", k.contextTokens());
        return m;
    }
}

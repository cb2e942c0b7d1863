package io.kvtier.replay;

import io.kvtier.replay.trace.Trace;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The replay's hybrid cost model as one comparison: the same trace, tiers and capacity in bytes
 * replayed with a hybrid model's per-group rules ({@code --kv-groups gemma3-27b}: the window group
 * stores and loads only blocks inside the window) and with the same layers all full ("every block
 * of every layer", {@link KvGroupLayout#allFull()}); the bytes each stored and loaded, per group
 * and per request, the hit ratio and the cost model's TTFT of each.
 */
public final class KvTrafficReport {

    private KvTrafficReport() {
    }

    /**
     * The replays to compare for {@code cfg} (which has {@link ReplayConfig#kvGroups()}): {@code cfg}
     * itself, then, for a hybrid layout, the same config with the layout all full (same bytes per
     * token, so the same host capacity in bytes).
     */
    public static List<ReplayConfig> configs(ReplayConfig cfg) {
        if (cfg.kvGroups() == null) {
            throw new IllegalArgumentException("a KV traffic report needs --kv-groups");
        }
        return cfg.kvGroups().hybrid() ? List.of(cfg, cfg.withKvGroups(cfg.kvGroups().allFull())) : List.of(cfg);
    }

    /** Runs {@link #configs} one after the other over {@code trace}. */
    public static List<ReplayResult> run(Trace trace, ReplayConfig cfg, Progress progress) {
        List<ReplayResult> out = new ArrayList<>();
        for (ReplayConfig c : configs(cfg)) {
            out.add(Replay.run(trace, c, progress));
        }
        return out;
    }

    /** Writes the comparison table of {@code results} ({@link #run}: per-group rules first). */
    public static void printTable(PrintStream out, List<ReplayResult> results) {
        ReplayResult first = results.getFirst();
        ReplayConfig c = first.config();
        out.printf(Locale.ROOT, "KV traffic by group, %s; host %s tokens of every layer = %s, shared by the groups "
                        + "(each holds %s); TTFT %s%n", c.kvGroups().describe(), c.host(),
                ReplayReport.bytes(Math.multiplyExact((long) first.hostChunks() * c.blockSize(), c.cost().kvBytesPerToken())),
                io.kvtier.text.Plural.grouped(first.hostChunks(), "block"), c.mode() == ReplayConfig.Mode.TIMED ? "of the timed replay"
                        : "of each request alone (its load, then its prefill)");
        out.printf(Locale.ROOT, "  %-32s %9s %12s %12s %12s %12s %9s %9s %9s%n", "rules", "hit ratio", "stored", "per request",
                "loaded", "per request", "TTFT p50", "p90", "mean s");
        for (ReplayResult r : results) {
            ReplayResult.KvTraffic t = r.kvTraffic();
            ReplayResult.Percentiles ttft = t.ttft();
            out.printf(Locale.ROOT, "  %-32s %9.4f %12s %12s %12s %12s %9.3f %9.3f %9.3f%n",
                    t.layout().hybrid() ? "per-group rules" : "every block of every layer", r.tokenHitRatio(),
                    ReplayReport.bytes(t.bytesStored()), ReplayReport.bytes(t.bytesStored() / r.requests()),
                    ReplayReport.bytes(t.bytesLoaded()), ReplayReport.bytes(t.bytesLoaded() / r.requests()), ttft.p50(),
                    ttft.p90(), ttft.mean());
            if (t.groups().size() > 1) {
                for (ReplayResult.GroupTraffic g : t.groups()) {
                    out.printf(Locale.ROOT, "    %-30s %9s %12s %12s %12s %12s   %s stored, %,d loaded%s%n",
                            "group " + g.index() + (g.window() == 0 ? " full" : " window " + g.window()) + ", " + g.layers()
                                    + " layers", "", ReplayReport.bytes(g.bytesStored()),
                            ReplayReport.bytes(g.bytesStored() / r.requests()), ReplayReport.bytes(g.bytesLoaded()),
                            ReplayReport.bytes(g.bytesLoaded() / r.requests()),
                            io.kvtier.text.Plural.grouped(g.blocksStored(), "block"), g.blocksLoaded(),
                            g.window() == 0 ? "" : String.format(Locale.ROOT, ", %,d skipped (left the window)",
                                    g.windowBlocksSkipped()));
                }
            }
        }
        if (results.size() == 2) {
            ReplayResult a = results.get(0);
            ReplayResult b = results.get(1);
            out.printf(Locale.ROOT, "  %-32s %9s %12s %12s %12s %12s %9s %9s %9s%n", "per-group / every layer",
                    quotient(a.tokenHitRatio(), b.tokenHitRatio()), share(a.kvTraffic().bytesStored(), b.kvTraffic().bytesStored()), "",
                    share(a.kvTraffic().bytesLoaded(), b.kvTraffic().bytesLoaded()), "",
                    quotient(a.kvTraffic().ttft().p50(), b.kvTraffic().ttft().p50()),
                    quotient(a.kvTraffic().ttft().p90(), b.kvTraffic().ttft().p90()),
                    quotient(a.kvTraffic().ttft().mean(), b.kvTraffic().ttft().mean()));
        }
    }

    /** {@code a / b} in the ratio row, or "n/a" when there is none (no hit in either run: 0 / 0 was NaN). */
    static String quotient(double a, double b) {
        double q = a / b;
        return b == 0 || !Double.isFinite(q) ? "n/a" : String.format(Locale.ROOT, "%.3f", q);
    }

    private static String share(long a, long b) {
        return b == 0 ? "-" : String.format(Locale.ROOT, "%.1f %%", 100.0 * a / b);
    }

    /**
     * The comparison as the {@code kv_traffic} field of the first result's record: one entry per
     * replay ({@code per_group}, {@code every_layer}), each with its groups keyed {@code group_<i>}.
     */
    public static Map<String, Object> toJson(List<ReplayResult> results) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (ReplayResult r : results) {
            ReplayResult.KvTraffic t = r.kvTraffic();
            Map<String, Object> e = new LinkedHashMap<>();
            e.put("kv_groups", t.layout().name());
            e.put("bytes_per_token_per_layer", t.layout().bytesPerTokenPerLayer());
            e.put("token_hit_ratio", r.tokenHitRatio());
            e.put("bytes_stored", t.bytesStored());
            e.put("bytes_loaded", t.bytesLoaded());
            e.put("bytes_stored_per_request", (double) t.bytesStored() / r.requests());
            e.put("bytes_loaded_per_request", (double) t.bytesLoaded() / r.requests());
            e.put("ttft_s", t.ttft()); // as the timed record's ttft_s: p50, p90, p99, mean, max
            for (ReplayResult.GroupTraffic g : t.groups()) {
                Map<String, Object> gm = new LinkedHashMap<>();
                gm.put("window", g.window());
                gm.put("layers", g.layers());
                gm.put("bytes_per_block", g.bytesPerBlock());
                gm.put("blocks_stored", g.blocksStored());
                gm.put("blocks_loaded", g.blocksLoaded());
                gm.put("bytes_stored", g.bytesStored());
                gm.put("bytes_loaded", g.bytesLoaded());
                gm.put("window_blocks_skipped", g.windowBlocksSkipped());
                e.put("group_" + g.index(), gm);
            }
            m.put(t.layout().hybrid() ? "per_group" : "every_layer", e);
        }
        return m;
    }
}

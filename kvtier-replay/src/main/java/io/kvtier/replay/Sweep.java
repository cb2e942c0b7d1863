package io.kvtier.replay;

import io.kvtier.replay.optimum.ChunkTrace;
import io.kvtier.replay.optimum.SweepChart;
import io.kvtier.replay.trace.Trace;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Instant replays of one trace over host tier capacities for several policies, each through its
 * own engine (run in parallel, one per core), with the Belady optimum at each capacity and the
 * ceiling; drawn as hit ratio against host capacity ({@link SweepChart}).
 */
public final class Sweep {

    /** Host capacities of the default sweep, tokens: 250k to 100M. */
    public static final List<Long> DEFAULT_HOST_TOKENS = List.of(250_000L, 500_000L, 1_000_000L, 2_000_000L,
            3_000_000L, 5_000_000L, 10_000_000L, 20_000_000L, 50_000_000L, 100_000_000L);

    /** The policies of the default sweep. */
    public static final List<Policy> DEFAULT_POLICIES = List.of(Policy.LRU, Policy.ARC, Policy.LRU_ADMIT2, Policy.LHD, Policy.DUEL);

    private Sweep() {
    }

    /**
     * Runs {@code base} (instant mode) with each policy at each host capacity; results in policy
     * order, then capacity order.
     *
     * @param threads replays run at once (>= 1)
     */
    public static List<ReplayResult> run(Trace trace, ReplayConfig base, List<Policy> policies, List<Long> hostTokens,
                                         int threads, Progress progress) {
        if (base.mode() != ReplayConfig.Mode.INSTANT) {
            throw new IllegalArgumentException("--sweep runs instant replays; drop --mode timed");
        }
        ChunkTrace chunks = base.blockSize() == ChunkTrace.CHUNK_TOKENS ? ChunkTrace.of(trace) : null;
        ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, threads));
        try {
            List<Future<ReplayResult>> futures = new ArrayList<>();
            for (Policy p : policies) {
                for (long cap : hostTokens) {
                    ReplayConfig cfg = base.withPolicy(p).withHost(Capacity.tokens(cap));
                    futures.add(pool.submit(() -> Replay.run(trace, cfg, progress, chunks)));
                }
            }
            List<ReplayResult> out = new ArrayList<>();
            for (Future<ReplayResult> f : futures) {
                out.add(f.get());
            }
            return out;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("sweep interrupted", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException re) {
                throw re;
            }
            throw new IllegalStateException("sweep replay failed", e.getCause());
        } finally {
            pool.shutdownNow();
        }
    }

    /** Prints hit ratios by capacity: one column per policy (with its fraction of the optimum), then optimum and ceiling. */
    public static void printTable(PrintStream out, List<ReplayResult> results) {
        Map<Long, Map<String, ReplayResult>> byCap = group(results);
        List<String> policies = policies(results);
        ReplayResult first = results.getFirst();
        out.printf(Locale.ROOT, "sweep %s: %s, %s; %s; token hit ratio (fraction of optimum)%n", first.traceLabel(),
                io.kvtier.text.Plural.grouped(first.requests(), "request"),
                io.kvtier.text.Plural.grouped(first.promptTokens(), "prompt token"), fixedTiers(first));
        StringBuilder h = new StringBuilder(String.format(Locale.ROOT, "  %12s", "host tokens"));
        for (String p : policies) {
            h.append(String.format(Locale.ROOT, " %18s", p));
        }
        out.println(h.append(String.format(Locale.ROOT, " %9s %9s", "optimum", "ceiling")));
        for (Map.Entry<Long, Map<String, ReplayResult>> e : byCap.entrySet()) {
            StringBuilder b = new StringBuilder(String.format(Locale.ROOT, "  %12s", Capacity.format(e.getKey())));
            ReplayResult any = null;
            for (String p : policies) {
                ReplayResult r = e.getValue().get(p);
                any = r != null ? r : any;
                b.append(r == null ? String.format("%18s", "-")
                        : String.format(Locale.ROOT, " %8.4f (%6.3f)", r.tokenHitRatio(), r.fractionOfOptimum()));
            }
            if (any != null) {
                b.append(String.format(Locale.ROOT, " %9.4f %9.4f", any.optimumTokenHitRatio(), any.ceilingTokenHitRatio()));
            }
            out.println(b);
        }
    }

    /**
     * Writes the chart: one line per policy, the optimum and the ceiling, against host capacity in tokens.
     */
    public static void writeChart(Path png, List<ReplayResult> results) throws IOException {
        Map<Long, Map<String, ReplayResult>> byCap = group(results);
        List<Long> caps = new ArrayList<>(byCap.keySet());
        double[] x = new double[caps.size()];
        for (int i = 0; i < x.length; i++) {
            x[i] = caps.get(i);
        }
        Map<String, double[][]> series = new LinkedHashMap<>();
        for (String p : policies(results)) {
            double[] y = new double[x.length];
            for (int i = 0; i < x.length; i++) {
                y[i] = byCap.get(caps.get(i)).get(p).tokenHitRatio();
            }
            series.put(p, new double[][] {x, y});
        }
        ReplayResult first = results.getFirst();
        if (first.optimum() != null) {
            double[] opt = new double[x.length];
            double[] ceil = new double[x.length];
            for (int i = 0; i < x.length; i++) {
                ReplayResult r = byCap.get(caps.get(i)).values().iterator().next();
                opt[i] = r.optimumTokenHitRatio();
                ceil[i] = r.ceilingTokenHitRatio();
            }
            series.put(first.diskChunks() > 0 ? "optimum (Belady, device + host + disk)" : "optimum (Belady, device + host)",
                    new double[][] {x, opt});
            series.put("ceiling (unbounded)", new double[][] {x, ceil});
        }
        SweepChart.write(png, chartTitle(results), "host tier capacity (tokens, log scale); " + fixedTiers(first), series);
    }

    /**
     * The tiers every replay of a sweep shares, for the table's first line and the chart's axis
     * title: "device tier N tokens", and "; disk tier N tokens" when a disk tier is behind the host
     * (a sweep with a disk tier is otherwise drawn like a host-only one).
     */
    static String fixedTiers(ReplayResult first) {
        String s = String.format(Locale.ROOT, "device tier %,d tokens", (long) first.deviceBlocks() * first.config().blockSize());
        if (first.diskChunks() == 0) {
            return s;
        }
        Capacity disk = first.config().disk();
        return s + String.format(Locale.ROOT, "; disk tier %,d tokens", disk.kind() == Capacity.Kind.TOKENS ? disk.tokens()
                : (long) first.diskChunks() * first.config().blockSize());
    }

    /**
     * The chart's title: the trace, and how many of its requests when only the first ones were
     * replayed (the device tier's size is in the axis title: one line of 960 pixels held both
     * only for short trace names).
     */
    static String chartTitle(List<ReplayResult> results) {
        ReplayResult first = results.getFirst();
        String name = Path.of(first.trace()).getFileName().toString();
        String part = first.partial() ? String.format(Locale.ROOT, " (first %,d of %,d requests)", first.requests(),
                first.traceRequests()) : "";
        return String.format(Locale.ROOT, "%s%s: token hit ratio", name, part);
    }

    private static Map<Long, Map<String, ReplayResult>> group(List<ReplayResult> results) {
        if (results.isEmpty()) {
            throw new IllegalArgumentException("no sweep results");
        }
        Map<Long, Map<String, ReplayResult>> byCap = new java.util.TreeMap<>();
        for (ReplayResult r : results) {
            byCap.computeIfAbsent(r.config().host().tokens(), k -> new LinkedHashMap<>())
                    .put(r.config().policy().cliName(), r);
        }
        return byCap;
    }

    private static List<String> policies(List<ReplayResult> results) {
        List<String> out = new ArrayList<>();
        for (ReplayResult r : results) {
            if (!out.contains(r.config().policy().cliName())) {
                out.add(r.config().policy().cliName());
            }
        }
        return out;
    }
}

package io.kvtier.cli;

import io.kvtier.replay.Capacity;
import io.kvtier.replay.KvGroupLayout;
import io.kvtier.replay.KvTrafficReport;
import io.kvtier.replay.Policy;
import io.kvtier.replay.Progress;
import io.kvtier.replay.Replay;
import io.kvtier.replay.ReplayConfig;
import io.kvtier.replay.ReplayReport;
import io.kvtier.replay.ReplayResult;
import io.kvtier.replay.Sweep;
import io.kvtier.replay.sim.CostModel;
import io.kvtier.replay.trace.Trace;
import io.kvtier.replay.trace.TraceFormatException;
import io.kvtier.replay.trace.TraceReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code ./kvtier replay}: a Mooncake trace through the real scheduler, KV manager, offload
 * scheduler and host tier bookkeeping, with a simulated model runner and transfer engine (a cost
 * model on a virtual clock). See {@code docs/replay-cost-model.md} for the cost model.
 */
@Command(name = "replay", mixinStandardHelpOptions = true, sortOptions = false, resourceBundle = "io.kvtier.cli.ReplayHelp", defaultValueProvider = ReplayCommand.Defaults.class,
        description = "Replay a request trace through the real scheduler and tiers with a simulated GPU; "
                + "report hit ratios per tier against the optimum, and latencies in timed mode.")
final class ReplayCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--trace", required = true, paramLabel = "FILE", description = "Mooncake trace (JSON lines), e.g. ../shared/traces/mooncake/conversation_trace.jsonl")
    Path trace;

    @Option(names = "--mode", paramLabel = "MODE", defaultValue = "instant", description = "instant (default): one request at a time, no time, for policy studies; timed: arrivals at trace timestamps, continuous batching, latencies")
    String mode;

    @Mixin
    EvictionOptions eviction;

    @Option(names = "--device-tokens", paramLabel = "N", description = "device (GPU) KV capacity in tokens, or min (smallest that fits the largest request) or inf (default: min in instant mode, 448k = one H100 in timed mode)")
    String deviceTokens;

    @Option(names = "--host-cache-tokens", defaultValue = "inf", paramLabel = "N", description = "host tier capacity in tokens (k/M/G = 10^3/10^6/10^9, Ki/Mi/Gi = 2^10/2^20/2^30), 0 for none, or inf (default)")
    String hostTokens;

    @Option(names = "--disk-cache-tokens", defaultValue = "0", paramLabel = "N", description = "disk tier capacity in tokens behind the host tier (written through from it; a disk hit is promoted into the host, then loaded), 0 for none (default), or inf")
    String diskTokens;

    @Option(names = "--remote-cache-tokens", defaultValue = "0", paramLabel = "N", description = "simulated remote tier (a Redis / Valkey shared by engines) behind the host tier, in tokens: written through from the host, a remote hit is probed, promoted into the host, then loaded; LRU beyond the capacity; 0 for none (default), or inf")
    String remoteTokens;

    @Option(names = "--remote-latency-us", paramLabel = "TIME", converter = TimeFlag.CostMicros.class, description = "fixed cost of one remote job (probe, read or write pipeline), e.g. 200us or 0.2ms; a plain number is microseconds (default 200us: a datacenter round trip plus Redis)")
    Duration remoteLatency;

    @Option(names = "--remote-gbps", paramLabel = "GBPS", description = "throughput of one remote job's values, GB/s (default 2.5: a 25 GbE link at 80%%)")
    Double remoteGbps;

    @Mixin
    BatchOptions batch;

    @Option(names = "--speedup", paramLabel = "X", description = "timed mode: request i arrives at timestamp_i / X (default 1; one simulated GPU needs about 0.3 on the conversation trace)")
    Double speedup;

    @Mixin
    MaxTokensOptions maxTokens;

    @Option(names = "--requests", paramLabel = "N", description = "replay only the first N requests (default: all; counted from --from-request)")
    Integer requests;

    @Option(names = "--from-request", paramLabel = "I", description = "start at the request with 0-based index I in file (arrival) order, skipping the ones before (default 0); e.g. to evaluate on the second half of a trace a policy tuned on the first")
    Integer fromRequest;

    @Mixin
    StatsOptions stats;

    @Option(names = "--sweep", description = "instant replays of lru, arc, lru-admit2, lhd and duel over host capacities, with the optimum and the ceiling; writes --png")
    boolean sweep;

    // Split here, not by picocli, whose split drops a trailing empty item ("1M,3M," was taken).
    @Option(names = "--sweep-host-cache-tokens", paramLabel = "N,N,...", description = "with --sweep: host capacities (default 250k,500k,1M,2M,3M,5M,10M,20M,50M,100M)")
    List<String> sweepHostTokens;

    @Option(names = "--png", paramLabel = "FILE", description = "with --sweep: the chart (default: sweep-<trace name>.png)")
    Path png;

    @Option(names = "--sweep-threads", paramLabel = "N", description = "with --sweep: replays run at once (default: one per core)")
    Integer sweepThreads;

    // The cost model (defaults: Llama-3.1-8B BF16 on one H100 SXM, PCIe Gen5 host link; docs/replay-cost-model.md).
    @Option(names = "--kv-bytes-per-token", paramLabel = "SIZE", description = "KV bytes of one token of the simulated model, at most 1M (default 128K = 131072: Llama-3.1-8B BF16)")
    String kvBytesPerToken;

    @Option(names = "--kv-groups", paramLabel = "NAME", description = "the simulated model's KV groups: gemma3-27b (10 full layers, 52 with a sliding window of 1024; BF16) replays with per-group offloading rules, then with the same layers all full (gemma3-27b-all-full), and prints the bytes each stored and loaded, per group; sets the KV bytes per token (default: one group of --kv-bytes-per-token)")
    String kvGroups;

    @Option(names = "--linear-us-per-token", paramLabel = "US", description = "matmul time of one token, microseconds (default 32.5)")
    Double linearUsPerToken;

    @Option(names = "--attention-ns-per-pair", paramLabel = "NS", description = "attention time of one causal query-key pair over all layers, ns (default 1.31)")
    Double attentionNsPerPair;

    @Option(names = "--weight-read-ms", paramLabel = "TIME", converter = TimeFlag.CostMillis.class, description = "time to read the weights once per step, e.g. 6ms or 5990us; a plain number is milliseconds (default 5.99ms)")
    Duration weightRead;

    @Option(names = "--kv-read-ns-per-token", paramLabel = "NS", description = "time to read one token's KV in attention, ns (default 48.9)")
    Double kvReadNsPerToken;

    @Option(names = "--step-overhead-ms", paramLabel = "TIME", converter = TimeFlag.CostMillis.class, description = "fixed cost of one engine step, e.g. 0.5ms or 500us; a plain number is milliseconds (default 0.5ms)")
    Duration stepOverhead;

    @Option(names = "--host-gbps", paramLabel = "GBPS", description = "device-host bandwidth per direction, GB/s (default 50: PCIe Gen5 x16)")
    Double hostGbps;

    @Option(names = "--host-latency-us", paramLabel = "TIME", converter = TimeFlag.CostMicros.class, description = "fixed cost of one transfer job, e.g. 10us or 0.01ms; a plain number is microseconds (default 10us)")
    Duration hostLatency;

    @Option(names = "--context-tokens", paramLabel = "N", description = "the simulated model's context, e.g. 128k, 1M, 1Mi, at most 10M (default 131072; raised to the trace's longest request, up to 10M: a longer one is refused naming its line)")
    String contextTokens;

    /** Most KV bytes per token: 1 MiB is twice a 405B model's (126 layers x 8 KV heads x 128 x K,V x 2 B = 504 KiB). */
    static final long MAX_KV_BYTES_PER_TOKEN = 1L << 20;

    /** Latest simulated arrival, ns: the virtual clock's range with room for the run after it (about 31 years). */
    static final double MAX_ARRIVAL_NANOS = 1e18;

    /** Defaults of the shared options that differ between commands (the mode decides --max-tokens, --max-batch-tokens). */
    static final class Defaults extends FlagDefaults {
        Defaults() {
            super(Map.of("--block-size", String.valueOf(ReplayConfig.DEFAULT_BLOCK_SIZE),
                    "--max-running", String.valueOf(ReplayConfig.DEFAULT_MAX_RUNNING)));
        }
    }

    private final FormerNames former = new FormerNames();

    // Former spellings, kept for one release (FlagVocabulary.FORMER_NAMES).
    @Option(names = "--policy", hidden = true, description = "deprecated: --eviction")
    void policy(String v) {
        former.use("--policy", () -> eviction.set(v));
    }

    @Option(names = "--json", hidden = true, description = "deprecated: --stats-json")
    void json(Path v) {
        former.use("--json", () -> stats.setJson(v));
    }

    @Option(names = "--csv", hidden = true, description = "deprecated: --stats-csv")
    void csv(Path v) {
        former.use("--csv", () -> stats.setCsv(v));
    }

    @Option(names = "--host-tokens", hidden = true, description = "deprecated: --host-cache-tokens")
    void hostTokens(String v) {
        former.use("--host-tokens", () -> hostTokens = v);
    }

    @Option(names = "--disk-tokens", hidden = true, description = "deprecated: --disk-cache-tokens")
    void diskTokens(String v) {
        former.use("--disk-tokens", () -> diskTokens = v);
    }

    @Option(names = "--sweep-host-tokens", hidden = true, description = "deprecated: --sweep-host-cache-tokens")
    void sweepHostTokens(List<String> v) {
        former.use("--sweep-host-tokens", () -> sweepHostTokens = v);
    }

    @Option(names = "--threads", hidden = true, description = "deprecated: --sweep-threads")
    void threads(int v) {
        former.use("--threads", () -> sweepThreads = v);
    }

    @Option(names = "--outputs", hidden = true, description = "deprecated: --max-tokens 1 (first) or leave it out in timed mode (trace)")
    void outputs(String v) {
        switch (v.toLowerCase(java.util.Locale.ROOT)) {
            case "first" -> former.use("--outputs", v, () -> maxTokens.set(1));
            case "trace" -> former.use("--outputs", v, () -> maxTokens.set(Integer.MAX_VALUE));
            default -> throw new BadInputException("--outputs: '" + v + "' is neither first nor trace (use --max-tokens)");
        }
    }

    @Override
    public Integer call() throws IOException {
        former.apply(spec);
        checkCombinations();
        Checks.inputFile(trace, "--trace");
        Path chart = sweep ? (png != null ? png : Path.of("sweep-" + stem(trace) + ".png")) : null;
        stats.check(List.of(new Checks.FileFlag(png != null ? "--png" : "the sweep's chart", chart)),
                List.of(new Checks.FileFlag("--trace", trace)));
        ReplayConfig cfg = config();
        Trace t = readTrace(cfg);
        checkClockRange(t, cfg);
        try {
            return run(t, cfg, chart);
        } catch (io.kvtier.replay.DeviceTierTooSmallException e) {
            throw deviceTokens == null ? new BadInputException(e.ofDefault(), e) : e; // name no flag that was not given
        } catch (io.kvtier.replay.sim.ClockOverflowException e) {
            // A step or a transfer that would never end: an ArithmeticException's stack trace before, or a
            // job that wrapped around and ended at once (a remote link of 1e-300 GB/s served its hits instantly).
            throw new BadInputException(e.getMessage() + ": the cost model's figures are too large for this trace"
                    + costFlagsGiven(), e);
        }
    }

    /** The cost flags given, for a message: {@code " (--remote-gbps 1E-300)"}, or nothing; times in their flags' plain units. */
    private String costFlagsGiven() {
        List<String> given = new ArrayList<>();
        String[] names = {"--linear-us-per-token", "--attention-ns-per-pair", "--weight-read-ms", "--kv-read-ns-per-token",
            "--step-overhead-ms", "--host-gbps", "--host-latency-us", "--remote-latency-us", "--remote-gbps"};
        String[] values = {shown(linearUsPerToken), shown(attentionNsPerPair), shown(weightRead, TimeFlag.Unit.MILLIS),
            shown(kvReadNsPerToken), shown(stepOverhead, TimeFlag.Unit.MILLIS), shown(hostGbps),
            shown(hostLatency, TimeFlag.Unit.MICROS), shown(remoteLatency, TimeFlag.Unit.MICROS), shown(remoteGbps)};
        for (int i = 0; i < names.length; i++) {
            if (values[i] != null) {
                given.add(names[i] + " " + values[i]);
            }
        }
        return given.isEmpty() ? "" : " (" + String.join(", ", given) + ")";
    }

    private static String shown(Double v) {
        return v == null ? null : Checks.shown(v);
    }

    private static String shown(Duration d, TimeFlag.Unit plain) {
        return d == null ? null : TimeFlag.shown(d, plain);
    }

    private int run(Trace t, ReplayConfig cfg, Path chart) throws IOException {
        if (sweep) {
            List<ReplayResult> results = sweep(t, cfg);
            Sweep.printTable(System.out, results);
            Sweep.writeChart(chart, results);
            System.out.println("chart: " + chart);
            stats.write(results.stream().map(ReplayReport::toJson).toList(), true);
            return 0;
        }
        if (cfg.kvGroups() != null) {
            List<ReplayResult> results;
            try (Progress p = Progress.onTerminal("replay " + cfg.mode().cliName(),
                    (long) t.size() * KvTrafficReport.configs(cfg).size())) {
                results = KvTrafficReport.run(t, cfg, p);
            }
            ReplayReport.printTable(System.out, results.getFirst());
            KvTrafficReport.printTable(System.out, results);
            java.util.Map<String, Object> record = ReplayReport.toJson(results.getFirst());
            record.put("kv_traffic", KvTrafficReport.toJson(results));
            stats.write(List.of(record), false);
            return 0;
        }
        ReplayResult r;
        try (Progress p = Progress.onTerminal("replay " + cfg.mode().cliName(), t.size())) {
            r = Replay.run(t, cfg, p);
        }
        ReplayReport.printTable(System.out, r);
        stats.write(List.of(ReplayReport.toJson(r)), false);
        return 0;
    }

    private List<ReplayResult> sweep(Trace t, ReplayConfig cfg) {
        List<Long> caps = new ArrayList<>();
        if (sweepHostTokens == null) {
            caps.addAll(Sweep.DEFAULT_HOST_TOKENS);
        } else {
            for (String s : sweepHostTokens.stream().flatMap(v -> Arrays.stream(v.split(",", -1))).toList()) {
                Capacity c = Capacity.parse(s, "--sweep-host-cache-tokens", java.util.EnumSet.of(Capacity.Kind.TOKENS));
                if (c.kind() != Capacity.Kind.TOKENS) {
                    // The chart's ceiling is already the unbounded host; a point at "inf" has no place on its axis.
                    throw new BadInputException("--sweep-host-cache-tokens: '" + s + "' is not allowed in a sweep: it takes numbers "
                            + "of tokens (the chart's ceiling is the unbounded host)");
                }
                if (c.tokens() < cfg.blockSize()) {
                    throw new BadInputException("--sweep-host-cache-tokens: '" + s + "' is less than one block ("
                            + cfg.blockSize() + " tokens)");
                }
                caps.add(c.tokens());
            }
        }
        int cores = sweepThreads != null ? Checks.atLeast(sweepThreads, 1, "--sweep-threads")
                : Runtime.getRuntime().availableProcessors();
        try (Progress p = Progress.onTerminal("sweep", (long) t.size() * caps.size() * Sweep.DEFAULT_POLICIES.size())) {
            return Sweep.run(t, cfg, Sweep.DEFAULT_POLICIES, caps, cores, p);
        }
    }

    /** Flags that only mean something with another flag or mode are refused without it, not ignored. */
    private void checkCombinations() {
        boolean timed = mode.equalsIgnoreCase("timed");
        Checks.needs(spec, sweep, "--sweep", "--png", "--sweep-host-cache-tokens", "--sweep-host-tokens", "--sweep-threads", "--threads");
        // The sweep sets both per replay; a value given for them was ignored.
        Checks.notWith(spec, sweep, "--sweep", "it replays lru, arc, lru-admit2, lhd and duel at each --sweep-host-cache-tokens",
                List.of("--eviction", "--policy", "--host-cache-tokens", "--host-tokens"));
        if (sweep && kvGroups != null) {
            throw new BadInputException("--kv-groups compares two replays of one capacity; drop --sweep");
        }
        if (kvGroups != null && kvBytesPerToken != null) {
            throw new BadInputException("--kv-groups sets the KV bytes per token (its layers' bytes); drop --kv-bytes-per-token");
        }
        if (sweep && timed) {
            throw new BadInputException("--sweep runs instant replays; drop --mode timed");
        }
        Checks.needs(spec, timed, "--mode timed (instant replays have no time)", "--speedup");
        Checks.needs(spec, !isZero(remoteTokens, "--remote-cache-tokens"), "a remote tier (--remote-cache-tokens > 0)", "--remote-latency-us", "--remote-gbps");
        // Without the host tier nothing is evicted, stored, loaded or moved over the host link.
        Checks.needs(spec, sweep || !isZero(hostTokens, "--host-cache-tokens"), "the host tier (--host-cache-tokens > 0)", "--eviction", "--policy",
                "--store-policy", "--store-horizon", "--load-policy", "--host-gbps", "--host-latency-us");
    }

    /** Whether a capacity flag's value means "none" (0 in any of its spellings: 0, 0k, 0M, ...). */
    private static boolean isZero(String capacity, String flag) {
        return Capacity.parse(capacity, flag).isNone();
    }

    /** The timed replay's arrivals must fit the virtual clock: a tiny --speedup would overflow it. */
    private void checkClockRange(Trace t, ReplayConfig cfg) {
        if (cfg.mode() != ReplayConfig.Mode.TIMED) {
            return;
        }
        long lastMs = t.requests().getLast().timestampMs();
        double lastNanos = lastMs * 1e6 / cfg.speedup();
        if (lastNanos > MAX_ARRIVAL_NANOS) {
            throw new BadInputException(String.format(java.util.Locale.ROOT, "--speedup %s puts the trace's last arrival "
                    + "(%,d ms) at %.3g s of simulated time, beyond the simulator's clock (%.0e s); use a --speedup of at least %.3g",
                    cfg.speedup(), lastMs, lastNanos / 1e9, MAX_ARRIVAL_NANOS / 1e9, lastMs * 1e6 / MAX_ARRIVAL_NANOS));
        }
    }

    private Trace readTrace(ReplayConfig cfg) throws IOException {
        Checks.inputFile(trace, "--trace");
        Integer first = Deprecations.zeroMeansDefault(requests, "--requests");
        if (first != null) {
            Checks.atLeast(first, 1, "--requests");
        }
        Trace t;
        try {
            t = TraceReader.read(trace, cfg::contextFault);
        } catch (TraceFormatException e) {
            throw new BadInputException(e.getMessage(), e);
        }
        if (t.size() == 0) {
            throw new BadInputException("--trace " + trace + ": no requests in the file");
        }
        if (fromRequest != null) {
            if (fromRequest < 0 || fromRequest >= t.size()) {
                throw new BadInputException("--from-request must be in 0.." + (t.size() - 1) + " (the trace has " + t.size()
                        + " requests), got " + fromRequest);
            }
            t = t.fromRequest(fromRequest);
        }
        if (first != null && first > t.size()) {
            // Said where the run's numbers are read: a silent "20 requests" looks like the 100 asked for were run.
            // From --from-request on, "all of its" would read as the whole trace (the source already names the start).
            String n = io.kvtier.text.Plural.grouped(t.size(), "request");
            return new Trace(t.source() + (fromRequest != null ? " (" + n + " from there on" : " (all of its " + n) + ": --requests "
                    + first + " asked for more)", t.requests(), t.fileRequests());
        }
        return first == null ? t : t.firstRequests(first);
    }

    private static void nonNegative(Double v, String flag) {
        if (v != null && !(v >= 0 && !v.isInfinite())) {
            throw new BadInputException(flag + " must be a number >= 0, got " + Checks.shown(v));
        }
    }

    /**
     * A cost-model time is 0 to a day (a step or transfer job costing more is no machine's): a bound
     * in the one form of every time flag, which a time past a long's nanoseconds gets too.
     */
    private void costModelTime(Duration d, String flag) {
        if (d != null) {
            TimeFlag.inRange(spec, flag, d, Duration.ZERO, Duration.ofDays(1));
        }
    }

    /** A cost-model time in ns, or {@code otherwise} when the flag was not given. */
    private static double nanos(Duration d, double otherwise) {
        return d != null ? d.toNanos() : otherwise;
    }

    private ReplayConfig config() {
        ReplayConfig.Mode m = switch (mode.toLowerCase(java.util.Locale.ROOT)) {
            case "instant" -> ReplayConfig.Mode.INSTANT;
            case "timed" -> ReplayConfig.Mode.TIMED;
            default -> throw new BadInputException("--mode: '" + mode + "' is neither instant nor timed");
        };
        ReplayConfig base = ReplayConfig.defaults(m);
        Integer outputCap = maxTokens.maxTokens();
        CostModel ref = CostModel.REFERENCE;
        nonNegative(linearUsPerToken, "--linear-us-per-token");
        nonNegative(attentionNsPerPair, "--attention-ns-per-pair");
        costModelTime(weightRead, "--weight-read-ms");
        nonNegative(kvReadNsPerToken, "--kv-read-ns-per-token");
        costModelTime(stepOverhead, "--step-overhead-ms");
        costModelTime(hostLatency, "--host-latency-us");
        if (hostGbps != null) {
            Checks.positive(hostGbps, "--host-gbps");
        }
        costModelTime(remoteLatency, "--remote-latency-us");
        if (remoteGbps != null) {
            Checks.positive(remoteGbps, "--remote-gbps");
        }
        long kvBytes = ref.kvBytesPerToken();
        if (kvBytesPerToken != null) {
            kvBytes = Sizes.parseBytes(kvBytesPerToken, "--kv-bytes-per-token");
            Checks.atLeast(kvBytes, 1, "--kv-bytes-per-token");
            if (kvBytes > MAX_KV_BYTES_PER_TOKEN) {
                throw new BadInputException("--kv-bytes-per-token " + kvBytesPerToken + " is more than 1M (" + MAX_KV_BYTES_PER_TOKEN
                        + " bytes), twice a 405B model's KV per token");
            }
        }
        int context = contextTokens != null ? contextTokens(contextTokens) : ref.contextTokens();
        int blockSize = batch.blockSize();
        if (blockSize > ReplayConfig.MAX_BLOCK_SIZE) {
            throw new BadInputException("--block-size must be at most " + ReplayConfig.MAX_BLOCK_SIZE + ", got " + blockSize);
        }
        Integer maxBatchTokens = batch.maxBatchTokens();
        double x = speedup != null ? Checks.positive(speedup, "--speedup") : 1.0;
        CostModel cost = new CostModel(ref.name() + (customCost() ? " (modified)" : ""), kvBytes,
                linearUsPerToken != null ? linearUsPerToken * 1e3 : ref.linearNanosPerToken(),
                attentionNsPerPair != null ? attentionNsPerPair : ref.attentionNanosPerPair(),
                nanos(weightRead, ref.weightReadNanos()),
                kvReadNsPerToken != null ? kvReadNsPerToken : ref.kvReadNanosPerToken(),
                nanos(stepOverhead, ref.stepOverheadNanos()),
                hostGbps != null ? hostGbps * 1e9 : ref.hostBytesPerSecond(),
                nanos(hostLatency, ref.hostLatencyNanos()),
                context);
        KvGroupLayout layout = null;
        if (kvGroups != null) {
            try {
                layout = KvGroupLayout.named(kvGroups);
            } catch (IllegalArgumentException e) {
                throw new BadInputException(e.getMessage(), e);
            }
        }
        ReplayConfig cfg = new ReplayConfig(m, eviction.policy(),
                deviceTokens == null ? base.device() : Capacity.parse(deviceTokens, "--device-tokens"),
                tierCapacity(hostTokens, "--host-cache-tokens", blockSize), tierCapacity(diskTokens, "--disk-cache-tokens", blockSize),
                blockSize,
                x, cost, maxBatchTokens == null ? 0 : maxBatchTokens, batch.maxRunning(),
                outputCap != null ? outputCap : base.maxTokens(), eviction.storePolicy(), eviction.loadPolicy()).withRemote(new ReplayConfig.Remote(
                tierCapacity(remoteTokens, "--remote-cache-tokens", blockSize),
                nanos(remoteLatency, ReplayConfig.Remote.NONE.latencyNanos()),
                remoteGbps != null ? remoteGbps * 1e9 : ReplayConfig.Remote.NONE.bytesPerSecond()));
        return cfg.withKvGroups(layout);
    }

    /**
     * An offload tier's capacity, refused when it holds tokens but not one block: a host or disk tier of
     * 100 tokens was silently no tier at all (its row left out), a remote one was rounded up to a block.
     */
    private static Capacity tierCapacity(String text, String flag, int blockSize) {
        Capacity c = Capacity.parse(text, flag);
        if (c.kind() == Capacity.Kind.TOKENS && c.tokens() > 0 && c.tokens() < blockSize) {
            throw new BadInputException(flag + ": '" + text + "' is less than one block (" + blockSize + " tokens): give at least "
                    + blockSize + ", or 0 for no such tier");
        }
        return c;
    }

    /** {@code --context-tokens} as the other token counts are given ({@code 128k}, {@code 1M}, {@code 1Mi}), 1 to 10M. */
    private static int contextTokens(String text) {
        Capacity c = Capacity.parse(text, "--context-tokens", java.util.EnumSet.of(Capacity.Kind.TOKENS));
        if (c.kind() != Capacity.Kind.TOKENS) {
            throw new BadInputException("--context-tokens: '" + text + "' is not a number of tokens (e.g. 1M, 131072, 128k, 1Mi)");
        }
        long n = Checks.atLeast(c.tokens(), 1, "--context-tokens");
        if (n > ReplayConfig.MAX_CONTEXT_TOKENS) {
            throw new BadInputException(String.format(java.util.Locale.ROOT, "--context-tokens must be at most %,d "
                    + "(Llama 4 Scout's, the longest of a released model), got %,d", ReplayConfig.MAX_CONTEXT_TOKENS, n));
        }
        return (int) n;
    }

    private boolean customCost() {
        return kvBytesPerToken != null || linearUsPerToken != null || attentionNsPerPair != null || weightRead != null
                || kvReadNsPerToken != null || stepOverhead != null || hostGbps != null || hostLatency != null
                || contextTokens != null;
    }

    private static String stem(Path p) {
        String name = p.getFileName().toString();
        int dot = name.indexOf('.');
        return dot > 0 ? name.substring(0, dot) : name;
    }
}

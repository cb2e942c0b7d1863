package io.kvtier.cli;

import io.kvtier.replay.Capacity;
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
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code ./kvtier replay}: a Mooncake trace through the real scheduler, KV manager, offload
 * scheduler and host tier bookkeeping, with a simulated model runner and transfer engine (a cost
 * model on a virtual clock). See {@code docs/replay-cost-model.md} for the cost model.
 */
@Command(name = "replay", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Replay a request trace through the real scheduler and tiers with a simulated GPU; "
                + "report hit ratios per tier against the optimum, and latencies in timed mode.")
final class ReplayCommand implements Callable<Integer> {

    @Option(names = "--trace", required = true, paramLabel = "FILE", description = "Mooncake trace (JSON lines), e.g. ../shared/traces/mooncake/conversation_trace.jsonl")
    Path trace;

    @Option(names = "--mode", defaultValue = "instant", description = "instant (default): one request at a time, no time, for policy studies; timed: arrivals at trace timestamps, continuous batching, latencies")
    String mode;

    @Option(names = "--policy", defaultValue = "lru", description = "host tier policy: lru (default), arc, lru-admit2 (LRU admitting a chunk from its second use)")
    String policy;

    @Option(names = "--device-tokens", paramLabel = "N", description = "device (GPU) KV capacity in tokens, or min (smallest that fits the largest request) or inf (default: min in instant mode, 448k = one H100 in timed mode)")
    String deviceTokens;

    @Option(names = "--host-tokens", defaultValue = "inf", paramLabel = "N", description = "host tier capacity in tokens (k/M/G = 1e3/1e6/1e9, Ki/Mi/Gi = 2^10/2^20/2^30), 0 for none, or inf (default)")
    String hostTokens;

    @Option(names = "--disk-tokens", defaultValue = "0", paramLabel = "N", description = "disk tier capacity in tokens behind the host tier (written through from it; a disk hit is promoted into the host, then loaded), 0 for none (default), or inf")
    String diskTokens;

    @Option(names = "--block-size", defaultValue = "512", description = "tokens per block (default ${DEFAULT-VALUE}, the traces' hash granularity; the optimum needs 512)")
    int blockSize;

    @Option(names = "--speedup", defaultValue = "1", description = "timed mode: request i arrives at timestamp_i / speedup (default ${DEFAULT-VALUE}; one simulated GPU needs about 0.3 on the conversation trace)")
    double speedup;

    @Option(names = "--outputs", paramLabel = "first|trace", description = "tokens generated per request: first (only the first token; default in instant mode) or trace (the trace's output_length; default in timed mode)")
    String outputs;

    @Option(names = "--max-batch-tokens", defaultValue = "0", description = "token budget of one step (default: the longest prompt in instant mode, 8192 in timed mode)")
    int maxBatchTokens;

    @Option(names = "--max-running", defaultValue = "256", description = "most requests running at once (default ${DEFAULT-VALUE})")
    int maxRunning;

    @Option(names = "--requests", defaultValue = "0", description = "replay only the first N requests (default 0: all)")
    int requests;

    @Option(names = "--json", paramLabel = "FILE", description = "write the results as JSON (an array with --sweep)")
    Path json;

    @Option(names = "--csv", paramLabel = "FILE", description = "write the results as CSV, one row per replay")
    Path csv;

    @Option(names = "--sweep", description = "instant replays of lru, arc and lru-admit2 over host capacities, with the optimum and the ceiling; writes --png")
    boolean sweep;

    @Option(names = "--sweep-host-tokens", split = ",", paramLabel = "N,N,...", description = "host capacities of the sweep (default 250k,500k,1M,2M,3M,5M,10M,20M,50M,100M)")
    List<String> sweepHostTokens;

    @Option(names = "--png", paramLabel = "FILE", description = "chart of the sweep (default: sweep-<trace name>.png)")
    Path png;

    @Option(names = "--threads", defaultValue = "0", description = "sweep replays run at once (default: one per core)")
    int threads;

    // The cost model (defaults: Llama-3.1-8B BF16 on one H100 SXM, PCIe Gen5 host link; docs/replay-cost-model.md).
    @Option(names = "--kv-bytes-per-token", description = "KV bytes of one token of the simulated model (default 131072: Llama-3.1-8B BF16)")
    Long kvBytesPerToken;

    @Option(names = "--linear-us-per-token", description = "matmul time of one token, microseconds (default 32.5)")
    Double linearUsPerToken;

    @Option(names = "--attention-ns-per-pair", description = "attention time of one causal query-key pair over all layers, ns (default 1.31)")
    Double attentionNsPerPair;

    @Option(names = "--weight-read-ms", description = "time to read the weights once per step, ms (default 5.99)")
    Double weightReadMs;

    @Option(names = "--kv-read-ns-per-token", description = "time to read one token's KV in attention, ns (default 48.9)")
    Double kvReadNsPerToken;

    @Option(names = "--step-overhead-ms", description = "fixed cost of one engine step, ms (default 0.5)")
    Double stepOverheadMs;

    @Option(names = "--host-gbps", description = "device-host bandwidth per direction, GB/s (default 50: PCIe Gen5 x16)")
    Double hostGbps;

    @Option(names = "--host-latency-us", description = "fixed cost of one transfer job, microseconds (default 10)")
    Double hostLatencyUs;

    @Option(names = "--context-tokens", description = "the simulated model's context (default 131072; raised to the trace's longest request)")
    Integer contextTokens;

    @Override
    public Integer call() throws IOException {
        Checks.atLeast(threads, 0, "--threads");
        Checks.atLeast(maxRunning, 1, "--max-running");
        Checks.outputFile(json, "--json");
        Checks.outputFile(csv, "--csv");
        Checks.outputFile(png, "--png");
        Checks.inputFile(trace, "--trace");
        Trace t = readTrace();
        ReplayConfig cfg = config();
        int cores = threads > 0 ? threads : Runtime.getRuntime().availableProcessors();
        if (sweep) {
            List<Long> caps = new ArrayList<>();
            if (sweepHostTokens == null) {
                caps.addAll(Sweep.DEFAULT_HOST_TOKENS);
            } else {
                for (String s : sweepHostTokens) {
                    Capacity c = Capacity.parse(s, "--sweep-host-tokens");
                    if (c.kind() != Capacity.Kind.TOKENS || c.tokens() < cfg.blockSize()) {
                        throw new BadInputException("--sweep-host-tokens: '" + s + "' must be a number of tokens of at least one block");
                    }
                    caps.add(c.tokens());
                }
            }
            List<ReplayResult> results;
            try (Progress p = Progress.onTerminal("sweep", (long) t.size() * caps.size() * Sweep.DEFAULT_POLICIES.size())) {
                results = Sweep.run(t, cfg, Sweep.DEFAULT_POLICIES, caps, cores, p);
            }
            Sweep.printTable(System.out, results);
            Path chart = png != null ? png : Path.of("sweep-" + stem(trace) + ".png");
            Sweep.writeChart(chart, results);
            System.out.println("chart: " + chart);
            if (json != null) {
                ReplayReport.writeJson(json, results);
            }
            if (csv != null) {
                ReplayReport.writeCsv(csv, results);
            }
            return 0;
        }
        ReplayResult r;
        try (Progress p = Progress.onTerminal("replay " + cfg.mode().cliName(), t.size())) {
            r = Replay.run(t, cfg, p);
        }
        ReplayReport.printTable(System.out, r);
        if (json != null) {
            ReplayReport.writeJson(json, r);
        }
        if (csv != null) {
            ReplayReport.writeCsv(csv, List.of(r));
        }
        return 0;
    }

    private Trace readTrace() throws IOException {
        if (!Files.isRegularFile(trace)) {
            throw new BadInputException("--trace " + trace + ": no such file");
        }
        Trace t;
        try {
            t = TraceReader.read(trace);
        } catch (TraceFormatException e) {
            throw new BadInputException(e.getMessage(), e);
        }
        if (t.size() == 0) {
            throw new BadInputException("--trace " + trace + ": no requests in the file");
        }
        if (requests < 0) {
            throw new BadInputException("--requests must be >= 0, got " + requests);
        }
        if (requests > 0 && requests < t.size()) {
            t = new Trace(t.source(), t.requests().subList(0, requests));
        }
        return t;
    }

    private static void nonNegative(Double v, String flag) {
        if (v != null && !(v >= 0 && !v.isInfinite())) {
            throw new BadInputException(flag + " must be a number >= 0, got " + v);
        }
    }

    private ReplayConfig config() {
        ReplayConfig.Mode m = switch (mode.toLowerCase(java.util.Locale.ROOT)) {
            case "instant" -> ReplayConfig.Mode.INSTANT;
            case "timed" -> ReplayConfig.Mode.TIMED;
            default -> throw new BadInputException("--mode: '" + mode + "' is neither instant nor timed");
        };
        ReplayConfig base = ReplayConfig.defaults(m);
        boolean traceOutputs = base.traceOutputs();
        if (outputs != null) {
            traceOutputs = switch (outputs.toLowerCase(java.util.Locale.ROOT)) {
                case "first" -> false;
                case "trace" -> true;
                default -> throw new BadInputException("--outputs: '" + outputs + "' is neither first nor trace");
            };
        }
        CostModel ref = CostModel.REFERENCE;
        nonNegative(linearUsPerToken, "--linear-us-per-token");
        nonNegative(attentionNsPerPair, "--attention-ns-per-pair");
        nonNegative(weightReadMs, "--weight-read-ms");
        nonNegative(kvReadNsPerToken, "--kv-read-ns-per-token");
        nonNegative(stepOverheadMs, "--step-overhead-ms");
        nonNegative(hostLatencyUs, "--host-latency-us");
        if (hostGbps != null) {
            Checks.positive(hostGbps, "--host-gbps");
        }
        if (kvBytesPerToken != null) {
            Checks.atLeast(kvBytesPerToken.longValue(), 1, "--kv-bytes-per-token");
        }
        if (contextTokens != null) {
            Checks.atLeast(contextTokens, 1, "--context-tokens");
        }
        Checks.atLeast(blockSize, 1, "--block-size");
        Checks.atLeast(maxBatchTokens, 0, "--max-batch-tokens"); // 0: the mode's default
        Checks.positive(speedup, "--speedup");
        CostModel cost = new CostModel(ref.name() + (customCost() ? " (modified)" : ""),
                kvBytesPerToken != null ? kvBytesPerToken : ref.kvBytesPerToken(),
                linearUsPerToken != null ? linearUsPerToken * 1e3 : ref.linearNanosPerToken(),
                attentionNsPerPair != null ? attentionNsPerPair : ref.attentionNanosPerPair(),
                weightReadMs != null ? weightReadMs * 1e6 : ref.weightReadNanos(),
                kvReadNsPerToken != null ? kvReadNsPerToken : ref.kvReadNanosPerToken(),
                stepOverheadMs != null ? stepOverheadMs * 1e6 : ref.stepOverheadNanos(),
                hostGbps != null ? hostGbps * 1e9 : ref.hostBytesPerSecond(),
                hostLatencyUs != null ? hostLatencyUs * 1e3 : ref.hostLatencyNanos(),
                contextTokens != null ? contextTokens : ref.contextTokens());
        return new ReplayConfig(m, Policy.parse(policy),
                deviceTokens == null ? base.device() : Capacity.parse(deviceTokens, "--device-tokens"),
                Capacity.parse(hostTokens, "--host-tokens"), Capacity.parse(diskTokens, "--disk-tokens"), blockSize,
                speedup, cost, maxBatchTokens, maxRunning, traceOutputs);
    }

    private boolean customCost() {
        return kvBytesPerToken != null || linearUsPerToken != null || attentionNsPerPair != null || weightReadMs != null
                || kvReadNsPerToken != null || stepOverheadMs != null || hostGbps != null || hostLatencyUs != null
                || contextTokens != null;
    }

    private static String stem(Path p) {
        String name = p.getFileName().toString();
        int dot = name.indexOf('.');
        return dot > 0 ? name.substring(0, dot) : name;
    }
}

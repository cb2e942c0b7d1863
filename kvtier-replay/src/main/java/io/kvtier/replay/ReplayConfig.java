package io.kvtier.replay;

import io.kvtier.replay.sim.CostModel;
import io.kvtier.replay.trace.TraceRequest;

/**
 * Settings of one replay.
 *
 * @param mode           {@link Mode#INSTANT} or {@link Mode#TIMED}
 * @param policy         the host tier's policy
 * @param device         device tier capacity, tokens ({@link Capacity#MIN} allowed)
 * @param host           host tier capacity, tokens (0 = no offloading)
 * @param disk           disk tier capacity, tokens (0 = none); written through from the host tier
 * @param blockSize      token positions per block (512 = the traces' hash granularity)
 * @param speedup        timed mode: arrivals at {@code timestamp / speedup}
 * @param cost           the simulated data plane's cost model
 * @param maxBatchTokens token budget of one engine step; 0 = the mode's default
 * @param maxRunning     most requests holding device blocks at once
 * @param maxTokens      most tokens a request generates: its trace's {@code output_length} (at least
 *                       1) capped at this; 1 = only the first token, {@link Integer#MAX_VALUE} = no cap
 * @param remote         the simulated remote tier behind the host tier ({@link Remote#NONE}: none)
 * @param storePolicy    when blocks are stored
 * @param loadPolicy     whether hits are loaded
 * @param kvGroups       the simulated model's KV groups and bytes per layer (null: one group of
 *                       {@code cost.kvBytesPerToken()} bytes per token, the replay's model before groups);
 *                       when given, {@code cost.kvBytesPerToken()} must be its bytes per token over all layers
 */
public record ReplayConfig(Mode mode, Policy policy, Capacity device, Capacity host, Capacity disk, int blockSize,
                           double speedup, CostModel cost, int maxBatchTokens, int maxRunning, int maxTokens, Remote remote,
                           io.kvtier.offload.StorePolicy storePolicy, io.kvtier.offload.LoadPolicy loadPolicy,
                           KvGroupLayout kvGroups) {

    /**
     * The simulated remote tier (a Redis / Valkey shared by engines): written through from the
     * host tier, read back by promotion into it, its jobs on their own lane costing
     * {@code latency + bytes / bandwidth} ({@link io.kvtier.replay.sim.SimulatedRemoteStore}).
     *
     * @param capacity       keys it holds, tokens ({@code 0}: no remote tier; {@code inf}: unbounded)
     * @param latencyNanos   fixed cost of one job, ns
     * @param bytesPerSecond throughput of one job's values, bytes/s
     */
    public record Remote(Capacity capacity, double latencyNanos, double bytesPerSecond) {
        /** No remote tier. */
        public static final Remote NONE = new Remote(Capacity.tokens(0),
                io.kvtier.replay.sim.SimulatedRemoteStore.DEFAULT_LATENCY_NANOS,
                io.kvtier.replay.sim.SimulatedRemoteStore.DEFAULT_BYTES_PER_SECOND);

        public Remote {
            if (capacity.kind() == Capacity.Kind.MIN) {
                throw Capacity.deviceOnly("--remote-cache-tokens");
            }
            if (!(latencyNanos >= 0) || Double.isInfinite(latencyNanos)) {
                throw new IllegalArgumentException("--remote-latency-us must be finite and >= 0, got " + latencyNanos / 1e3);
            }
            if (!(bytesPerSecond > 0) || Double.isInfinite(bytesPerSecond)) {
                throw new IllegalArgumentException("--remote-gbps must be finite and > 0, got " + bytesPerSecond / 1e9);
            }
        }

        /** Whether there is a remote tier. */
        public boolean enabled() {
            return !capacity.isNone();
        }
    }

    /** One KV group of {@code cost.kvBytesPerToken()} bytes per token. */
    public ReplayConfig(Mode mode, Policy policy, Capacity device, Capacity host, Capacity disk, int blockSize,
                        double speedup, CostModel cost, int maxBatchTokens, int maxRunning, int maxTokens, Remote remote,
                        io.kvtier.offload.StorePolicy storePolicy, io.kvtier.offload.LoadPolicy loadPolicy) {
        this(mode, policy, device, host, disk, blockSize, speedup, cost, maxBatchTokens, maxRunning, maxTokens, remote,
                storePolicy, loadPolicy, null);
    }

    /** Without a remote tier, eager stores, every hit loaded. */
    public ReplayConfig(Mode mode, Policy policy, Capacity device, Capacity host, Capacity disk, int blockSize,
                        double speedup, CostModel cost, int maxBatchTokens, int maxRunning, int maxTokens) {
        this(mode, policy, device, host, disk, blockSize, speedup, cost, maxBatchTokens, maxRunning, maxTokens, Remote.NONE);
    }

    /** Eager stores, every hit loaded. */
    public ReplayConfig(Mode mode, Policy policy, Capacity device, Capacity host, Capacity disk, int blockSize,
                        double speedup, CostModel cost, int maxBatchTokens, int maxRunning, int maxTokens, Remote remote) {
        this(mode, policy, device, host, disk, blockSize, speedup, cost, maxBatchTokens, maxRunning, maxTokens, remote,
                io.kvtier.offload.StorePolicy.EAGER, io.kvtier.offload.LoadPolicy.ALWAYS);
    }

    /** Without a remote tier. */
    public ReplayConfig(Mode mode, Policy policy, Capacity device, Capacity host, Capacity disk, int blockSize,
                        double speedup, CostModel cost, int maxBatchTokens, int maxRunning, int maxTokens,
                        io.kvtier.offload.StorePolicy storePolicy, io.kvtier.offload.LoadPolicy loadPolicy) {
        this(mode, policy, device, host, disk, blockSize, speedup, cost, maxBatchTokens, maxRunning, maxTokens, Remote.NONE,
                storePolicy, loadPolicy);
    }

    /** How requests are fed to the engine. */
    public enum Mode {
        /** One request at a time in trace order, each run to completion with its transfers: no time, no contention. */
        INSTANT,
        /** Arrivals at trace timestamps on the virtual clock, continuous batching, latencies. */
        TIMED;

        public String cliName() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** The traces' hash granularity, the default block size, tokens. */
    public static final int DEFAULT_BLOCK_SIZE = TraceRequest.BLOCK_TOKENS;

    /**
     * Device KV capacity of the reference setup in timed mode, tokens: an H100 SXM5 80GB (79.6 GiB
     * usable) at 90% memory utilization, less 14.96 GiB of BF16 weights and about 2 GiB of
     * activations and runtime, is about 54.7 GiB = 448k tokens of 128 KiB.
     */
    public static final long REFERENCE_DEVICE_TOKENS = 448_000;

    /** Step token budget in timed mode (vLLM V1's default for its API server on large GPUs). */
    public static final int TIMED_MAX_BATCH_TOKENS = 8192;

    /** Most running requests (vLLM's default max_num_seqs). */
    public static final int DEFAULT_MAX_RUNNING = 256;

    /**
     * Longest context a replay simulates, tokens: Llama 4 Scout's 10M, the longest of a released
     * model. The simulated model's context is raised to a trace's longest request (replay studies
     * caching, not context limits) but not beyond this: a request longer is a damaged line (2^31
     * output tokens would take hours of simulated decode steps), and is refused with its line.
     */
    public static final int MAX_CONTEXT_TOKENS = 10_000_000;

    /** Largest block, tokens: keeps a block's simulated bytes (at most 1 MiB a token) far from overflowing. */
    public static final int MAX_BLOCK_SIZE = 1 << 16;

    public ReplayConfig {
        if (blockSize < 1 || blockSize > MAX_BLOCK_SIZE) {
            throw new IllegalArgumentException("block size must be in [1, " + MAX_BLOCK_SIZE + "], got " + blockSize);
        }
        if (maxTokens < 1) {
            throw new IllegalArgumentException("max tokens must be at least 1, got " + maxTokens);
        }
        if (!(speedup > 0) || Double.isInfinite(speedup)) {
            throw new IllegalArgumentException("speedup must be finite and > 0, got " + speedup);
        }
        if (maxBatchTokens < 0 || maxRunning < 1) {
            throw new IllegalArgumentException("max batch tokens must be >= 0 and max running >= 1, got "
                    + maxBatchTokens + ", " + maxRunning);
        }
        if (host.kind() == Capacity.Kind.MIN) {
            throw Capacity.deviceOnly("--host-cache-tokens");
        }
        if (disk.kind() == Capacity.Kind.MIN) {
            throw Capacity.deviceOnly("--disk-cache-tokens");
        }
        if (!disk.isNone() && host.isNone()) {
            throw new IllegalArgumentException("--disk-cache-tokens: the disk tier sits behind the host tier; give --host-cache-tokens too");
        }
        if (remote.enabled() && host.isNone()) {
            throw new IllegalArgumentException("--remote-cache-tokens: the remote tier sits behind the host tier; give --host-cache-tokens too");
        }
        if (kvGroups != null) {
            if (cost.kvBytesPerToken() != kvGroups.bytesPerToken()) {
                throw new IllegalArgumentException("--kv-groups " + kvGroups.name() + " has " + kvGroups.bytesPerToken()
                        + " KV bytes per token, the cost model " + cost.kvBytesPerToken() + ": give one of them");
            }
            // every layout: the KV-traffic table counts the host tier only, so a disk or remote tier would be left out of it
            if (!disk.isNone() || remote.enabled()) {
                throw new IllegalArgumentException("--kv-groups " + kvGroups.name()
                        + ": the replay's hybrid cost model has the host tier only (no --disk-cache-tokens, --remote-cache-tokens)");
            }
            if (kvGroups.hybrid() && storePolicy.lazy()) {
                throw new IllegalArgumentException("--kv-groups " + kvGroups.name()
                        + ": --store-policy lazy is not built for a model with sliding-window layers: use --store-policy eager");
            }
        }
    }

    /**
     * The defaults of a mode: instant replays with the smallest device tier, an unbounded host tier
     * and first tokens only; timed replays with the reference GPU's device tier, an unbounded host
     * tier and the trace's output lengths (no cap). Both {@code duel} (the CLI's default), block size
     * 512, the reference cost model.
     */
    public static ReplayConfig defaults(Mode mode) {
        return new ReplayConfig(mode, Policy.DUEL, mode == Mode.INSTANT ? Capacity.MIN : Capacity.tokens(REFERENCE_DEVICE_TOKENS),
                Capacity.INF, Capacity.tokens(0), DEFAULT_BLOCK_SIZE, 1.0, CostModel.REFERENCE, 0, DEFAULT_MAX_RUNNING,
                mode == Mode.TIMED ? Integer.MAX_VALUE : 1);
    }

    public ReplayConfig withPolicy(Policy p) {
        return new ReplayConfig(mode, p, device, host, disk, blockSize, speedup,
                cost, maxBatchTokens, maxRunning, maxTokens, remote, storePolicy, loadPolicy, kvGroups);
    }

    public ReplayConfig withDevice(Capacity c) {
        return new ReplayConfig(mode, policy, c, host, disk, blockSize, speedup,
                cost, maxBatchTokens, maxRunning, maxTokens, remote, storePolicy, loadPolicy, kvGroups);
    }

    public ReplayConfig withHost(Capacity c) {
        return new ReplayConfig(mode, policy, device, c, disk, blockSize, speedup,
                cost, maxBatchTokens, maxRunning, maxTokens, remote, storePolicy, loadPolicy, kvGroups);
    }

    public ReplayConfig withDisk(Capacity c) {
        return new ReplayConfig(mode, policy, device, host, c, blockSize, speedup,
                cost, maxBatchTokens, maxRunning, maxTokens, remote, storePolicy, loadPolicy, kvGroups);
    }

    public ReplayConfig withBlockSize(int b) {
        return new ReplayConfig(mode, policy, device, host, disk, b, speedup,
                cost, maxBatchTokens, maxRunning, maxTokens, remote, storePolicy, loadPolicy, kvGroups);
    }

    public ReplayConfig withSpeedup(double s) {
        return new ReplayConfig(mode, policy, device, host, disk, blockSize, s,
                cost, maxBatchTokens, maxRunning, maxTokens, remote, storePolicy, loadPolicy, kvGroups);
    }

    public ReplayConfig withCost(CostModel c) {
        return new ReplayConfig(mode, policy, device, host, disk, blockSize, speedup,
                c, maxBatchTokens, maxRunning, maxTokens, remote, storePolicy, loadPolicy, kvGroups);
    }

    public ReplayConfig withMaxBatchTokens(int n) {
        return new ReplayConfig(mode, policy, device, host, disk, blockSize, speedup,
                cost, n, maxRunning, maxTokens, remote, storePolicy, loadPolicy, kvGroups);
    }

    public ReplayConfig withMaxRunning(int n) {
        return new ReplayConfig(mode, policy, device, host, disk, blockSize, speedup,
                cost, maxBatchTokens, n, maxTokens, remote, storePolicy, loadPolicy, kvGroups);
    }

    public ReplayConfig withMaxTokens(int n) {
        return new ReplayConfig(mode, policy, device, host, disk, blockSize, speedup,
                cost, maxBatchTokens, maxRunning, n, remote, storePolicy, loadPolicy, kvGroups);
    }

    public ReplayConfig withRemote(Remote r) {
        return new ReplayConfig(mode, policy, device, host, disk, blockSize, speedup,
                cost, maxBatchTokens, maxRunning, maxTokens, r, storePolicy, loadPolicy, kvGroups);
    }

    public ReplayConfig withStorePolicy(io.kvtier.offload.StorePolicy p) {
        return new ReplayConfig(mode, policy, device, host, disk, blockSize, speedup,
                cost, maxBatchTokens, maxRunning, maxTokens, remote, p, loadPolicy, kvGroups);
    }

    public ReplayConfig withLoadPolicy(io.kvtier.offload.LoadPolicy p) {
        return new ReplayConfig(mode, policy, device, host, disk, blockSize, speedup,
                cost, maxBatchTokens, maxRunning, maxTokens, remote, storePolicy, p, kvGroups);
    }

    /**
     * This config with the simulated model's KV groups {@code layout} (null: one group): the cost
     * model's KV bytes per token become the layout's over all layers, its compute times stay (and
     * its name says both).
     */
    public ReplayConfig withKvGroups(KvGroupLayout layout) {
        CostModel c = layout == null ? cost : cost.withKvOf(layout.name(), layout.bytesPerToken());
        return new ReplayConfig(mode, policy, device, host, disk, blockSize, speedup,
                c, maxBatchTokens, maxRunning, maxTokens, remote, storePolicy, loadPolicy, layout);
    }

    /** KV bytes of one token in {@code group} (the cost model's bytes per token without {@link #kvGroups}). */
    public long kvBytesPerToken(io.kvtier.kv.KvGroup group) {
        return kvGroups == null ? cost.kvBytesPerToken() : kvGroups.bytesPerToken(group);
    }

    /**
     * Tokens a request of the trace generates in this replay: its {@code output_length}, at most
     * {@link #maxTokens}, and at least 1: the engine samples the first token at the end of the
     * prefill, whatever the trace asks (a request with {@code output_length} 0 still gets it).
     */
    public int outputTokens(TraceRequest r) {
        return Math.max(1, Math.min(maxTokens, r.outputLength()));
    }

    /**
     * What is wrong with {@code r} in this replay, as a trace line's field, or null: its prompt and
     * the output it generates here must fit {@link #MAX_CONTEXT_TOKENS}. For
     * {@link io.kvtier.replay.trace.TraceReader#read(java.nio.file.Path, io.kvtier.replay.trace.TraceReader.RequestCheck)}.
     */
    public io.kvtier.replay.trace.TraceReader.Fault contextFault(TraceRequest r) {
        int out = outputTokens(r);
        long tokens = (long) r.inputLength() + out;
        if (tokens <= MAX_CONTEXT_TOKENS) {
            return null;
        }
        if (r.inputLength() >= MAX_CONTEXT_TOKENS) {
            return new io.kvtier.replay.trace.TraceReader.Fault("input_length", String.format(java.util.Locale.ROOT,
                    "%,d prompt tokens and the first output token exceed the longest context a replay simulates "
                            + "(%,d tokens, Llama 4 Scout's)", r.inputLength(), MAX_CONTEXT_TOKENS));
        }
        return new io.kvtier.replay.trace.TraceReader.Fault("output_length", String.format(java.util.Locale.ROOT,
                "%,d prompt + %,d output tokens = %,d exceed the longest context a replay simulates (%,d tokens, "
                        + "Llama 4 Scout's); give --max-tokens %d or less", r.inputLength(), out, tokens, MAX_CONTEXT_TOKENS,
                MAX_CONTEXT_TOKENS - r.inputLength()));
    }
}

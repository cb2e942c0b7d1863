package io.kvtier.replay.sim;

import io.kvtier.engine.ScheduledChunk;
import java.util.List;

/**
 * Time of the simulated data plane: one forward pass of a mixed batch (prefill chunks and decode
 * tokens) and one transfer between the device and the host tier, as a roofline over a few
 * hardware figures. Every number and its derivation: {@code docs/replay-cost-model.md}.
 *
 * <p>A forward pass over chunks {@code (s_i, n_i)} (start position, tokens) takes
 * <pre>
 *   stepOverhead
 * + max(weightRead, T * linearPerToken)                      T = sum of n_i (weights read once per
 *                                                            step; matmul compute grows with tokens)
 * + sum_i max(pairs_i * attentionPerPair, (s_i + n_i) * kvReadPerToken)
 *                                                            pairs_i = n_i * s_i + n_i (n_i + 1) / 2
 * </pre>
 * so a long prefill costs {@code linearPerToken} a token plus a causal-attention term that grows
 * with its context, and a decode step of batch {@code b} costs
 * {@code max(weightRead, b * linearPerToken)} plus the time to read every sequence's KV.
 * A transfer of {@code B} bytes takes {@code hostLatency + B / hostBandwidth}, and transfers of
 * one direction queue behind each other (see {@link SimulatedTransferEngine}).
 *
 * @param name                 name of the setup, for reports
 * @param kvBytesPerToken      KV bytes of one token over all layers (K and V), bytes
 * @param linearNanosPerToken  compute time of one token through the weights (matmuls), ns
 * @param attentionNanosPerPair compute time of one causal (query, key) pair over all layers, ns
 * @param weightReadNanos      time to read all weights from device memory once, ns
 * @param kvReadNanosPerToken  time to read one token's KV from device memory, ns
 * @param stepOverheadNanos    fixed cost of a step (launches, sampling, scheduling), ns
 * @param hostBytesPerSecond   device-host bandwidth per direction, bytes/s
 * @param hostLatencyNanos     fixed cost of one transfer job, ns
 * @param contextTokens        the model's context length, tokens
 */
public record CostModel(String name, long kvBytesPerToken, double linearNanosPerToken, double attentionNanosPerPair,
                        double weightReadNanos, double kvReadNanosPerToken, double stepOverheadNanos,
                        double hostBytesPerSecond, double hostLatencyNanos, int contextTokens) {

    /** Llama-3.1-8B: parameters (Meta's model card). */
    public static final double LLAMA3_8B_PARAMS = 8.03e9;
    /** Llama-3.1-8B shape (config.json): layers, KV heads, head dim, query heads. */
    public static final int LLAMA3_8B_LAYERS = 32;
    public static final int LLAMA3_8B_KV_HEADS = 8;
    public static final int LLAMA3_8B_HEAD_DIM = 128;
    public static final int LLAMA3_8B_Q_HEADS = 32;
    /** Llama-3.1-8B context length, tokens. */
    public static final int LLAMA3_8B_CONTEXT = 131_072;
    /** H100 SXM5 dense BF16 tensor throughput (NVIDIA datasheet), FLOP/s. */
    public static final double H100_BF16_FLOPS = 989.4e12;
    /** H100 SXM5 HBM3 bandwidth (NVIDIA datasheet), bytes/s. */
    public static final double H100_HBM_BYTES_PER_SECOND = 3.35e12;
    /** Assumed fraction of peak FLOP/s reached by the prefill matmuls. */
    public static final double MATMUL_EFFICIENCY = 0.5;
    /** Assumed fraction of peak HBM bandwidth reached by weight and KV reads. */
    public static final double HBM_EFFICIENCY = 0.8;
    /** Assumed FlashAttention forward throughput on H100 at head dim 128, FLOP/s. */
    public static final double ATTENTION_FLOPS = 400e12;
    /** PCIe Gen5 x16 achieved with pinned memory, per direction, bytes/s (raw 63 GB/s). */
    public static final double PCIE5_BYTES_PER_SECOND = 50e9;

    /**
     * The reference setup: Llama-3.1-8B in BF16 on one H100 SXM5 80GB, host memory over PCIe Gen5 x16.
     * Derived in {@code docs/replay-cost-model.md}.
     */
    public static final CostModel REFERENCE = new CostModel("llama3.1-8b-bf16/h100-sxm/pcie5",
            2L * 2 * LLAMA3_8B_LAYERS * LLAMA3_8B_KV_HEADS * LLAMA3_8B_HEAD_DIM,                       // 131,072 B
            2 * LLAMA3_8B_PARAMS / (MATMUL_EFFICIENCY * H100_BF16_FLOPS) * 1e9,                        // 32.5 us
            4.0 * LLAMA3_8B_LAYERS * LLAMA3_8B_Q_HEADS * LLAMA3_8B_HEAD_DIM / ATTENTION_FLOPS * 1e9,   // 1.31 ns
            2 * LLAMA3_8B_PARAMS / (HBM_EFFICIENCY * H100_HBM_BYTES_PER_SECOND) * 1e9,                 // 5.99 ms
            2.0 * 2 * LLAMA3_8B_LAYERS * LLAMA3_8B_KV_HEADS * LLAMA3_8B_HEAD_DIM
                    / (HBM_EFFICIENCY * H100_HBM_BYTES_PER_SECOND) * 1e9,                              // 48.9 ns
            500_000,                                                                                   // 0.5 ms
            PCIE5_BYTES_PER_SECOND,
            10_000,                                                                                    // 10 us
            LLAMA3_8B_CONTEXT);

    public CostModel {
        require(kvBytesPerToken > 0, "KV bytes per token must be > 0, got " + kvBytesPerToken);
        requireNonNegative(linearNanosPerToken, "linear time per token");
        requireNonNegative(attentionNanosPerPair, "attention time per pair");
        requireNonNegative(weightReadNanos, "weight read time");
        requireNonNegative(kvReadNanosPerToken, "KV read time per token");
        requireNonNegative(stepOverheadNanos, "step overhead");
        require(hostBytesPerSecond > 0 && Double.isFinite(hostBytesPerSecond),
                "host bandwidth must be finite and > 0, got " + hostBytesPerSecond);
        requireNonNegative(hostLatencyNanos, "host latency");
        require(contextTokens >= 1, "context must be at least 1 token, got " + contextTokens);
    }

    /** This cost model with {@code bytes} KV bytes per token (the transfers' sizes; the times per token are unchanged). */
    public CostModel withKvBytesPerToken(long bytes) {
        return withKv(name, bytes);
    }

    /**
     * This cost model's compute times with another model's KV: {@code kvName}'s {@code bytes} per
     * token, named so a report says whose costs and whose KV it simulates.
     */
    public CostModel withKvOf(String kvName, long bytes) {
        return withKv(name + " compute with " + kvName + " KV", bytes);
    }

    private CostModel withKv(String name, long bytes) {
        return new CostModel(name, bytes, linearNanosPerToken, attentionNanosPerPair, weightReadNanos, kvReadNanosPerToken,
                stepOverheadNanos, hostBytesPerSecond, hostLatencyNanos, contextTokens);
    }

    /** Simulated time of one forward pass over {@code chunks}, ns (0 for no chunk). */
    public long forwardNanos(List<ScheduledChunk> chunks) {
        if (chunks.isEmpty()) {
            return 0;
        }
        long tokens = 0;
        double attention = 0;
        for (ScheduledChunk c : chunks) {
            long n = c.tokens().length;
            long s = c.startPos();
            tokens += n;
            double pairs = n * s + n * (n + 1) / 2.0;
            attention += Math.max(pairs * attentionNanosPerPair, (s + n) * kvReadNanosPerToken);
        }
        double t = stepOverheadNanos + Math.max(weightReadNanos, tokens * linearNanosPerToken) + attention;
        return Math.round(t);
    }

    /** Simulated time of one prefill of {@code tokens} tokens from position 0 alone in a step, ns. */
    public long prefillNanos(int tokens) {
        return forwardNanos(List.of(new ScheduledChunk(0, new int[tokens], 0, new int[0], true)));
    }

    /** Simulated time of one transfer job of {@code bytes} bytes between device and host, ns. */
    public long hostTransferNanos(long bytes) {
        return Math.round(hostLatencyNanos + bytes / hostBytesPerSecond * 1e9);
    }

    /**
     * Disk tier bandwidth, bytes/s: one datacenter NVMe PCIe Gen4 SSD reading sequentially (about
     * 7 GB/s; e.g. Samsung PM9A3 / 990 Pro datasheets), the same figure used for writes.
     */
    public static final double DISK_BYTES_PER_SECOND = 7e9;

    /** Fixed cost of one disk job (open, read or write, close; NVMe latency plus file-system work), ns. */
    public static final double DISK_LATENCY_NANOS = 100_000;

    /** Time to move {@code bytes} between the host tier and disk in one job, ns. */
    public long diskTransferNanos(long bytes) {
        return Math.round(DISK_LATENCY_NANOS + bytes / DISK_BYTES_PER_SECOND * 1e9);
    }

    /** The figures in one line, with units. */
    public String describe() {
        return String.format("%s: KV %,d B/token, linear %.2f us/token, attention %.3f ns/pair, weight read %.3f ms, "
                        + "KV read %.1f ns/token, step overhead %.3f ms, host %.1f GB/s + %.1f us/job, context %,d",
                name, kvBytesPerToken, linearNanosPerToken / 1e3, attentionNanosPerPair, weightReadNanos / 1e6,
                kvReadNanosPerToken, stepOverheadNanos / 1e6, hostBytesPerSecond / 1e9, hostLatencyNanos / 1e3,
                contextTokens);
    }

    private static void requireNonNegative(double v, String what) {
        require(v >= 0 && Double.isFinite(v), what + " must be finite and >= 0, got " + v);
    }

    private static void require(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }
}

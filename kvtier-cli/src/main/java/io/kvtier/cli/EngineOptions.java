package io.kvtier.cli;

import io.kvtier.engine.EngineConfig;
import io.kvtier.model.Model;
import picocli.CommandLine.Option;

/**
 * The real engine's device pool: {@code --device-blocks}, {@code --no-prefix-cache}. With
 * {@link BatchOptions} it gives the {@link EngineConfig} of {@code generate} and {@code serve}.
 */
public final class EngineOptions {

    @Option(names = "--device-blocks", paramLabel = "N",
            description = "blocks in the device KV pool (default: generate, room for every prompt with its --max-tokens;"
                    + " serve, a full context for each of --max-running; at most 2 GiB of KV either way)."
                    + " The pool is reserved, not touched: only blocks written become resident")
    Integer deviceBlocks;

    @Option(names = "--no-prefix-cache", description = "do not reuse device KV blocks of equal prefixes")
    boolean noPrefixCache;

    /** Checks the values that do not depend on the model (before anything is loaded). */
    public void check() {
        deviceBlocks();
    }

    private Integer deviceBlocks() {
        deviceBlocks = Deprecations.zeroMeansDefault(deviceBlocks, "--device-blocks"); // noted once
        Integer v = deviceBlocks;
        return v == null ? null : Checks.atLeast(v, 1, "--device-blocks");
    }

    /**
     * The engine's configuration for a server on {@code checkpoint}, with {@code batch}'s scheduler
     * shape; the default pool holds a full context for each of {@code --max-running} requests.
     */
    public EngineConfig config(Model checkpoint, BatchOptions batch, int stopToken) {
        var layout = checkpoint.config().kvLayout(batch.blockSize());
        return config(batch, stopToken, servingBlocks(layout.blocksFor(checkpoint.config().seqLen()), batch.maxRunning(),
                layout.bytesPerBlock()));
    }

    /**
     * The engine's configuration for running {@code prompts} (token ids) to at most
     * {@code maxTokens} new tokens each, at most {@code atOnce} of them at a time (1 when each
     * starts after the previous finished); the default pool holds the {@code atOnce} largest at
     * their longest (and never more than {@code --max-running} of them).
     */
    public EngineConfig config(Model checkpoint, BatchOptions batch, int stopToken, java.util.List<int[]> prompts,
                               int maxTokens, int atOnce) {
        var layout = checkpoint.config().kvLayout(batch.blockSize());
        int seqLen = checkpoint.config().seqLen();
        long[] blocks = new long[prompts.size()];
        for (int i = 0; i < blocks.length; i++) {
            blocks[i] = layout.blocksFor(io.kvtier.engine.Engine.kvPositions(prompts.get(i).length, maxTokens, seqLen));
        }
        return config(batch, stopToken, requestBlocks(blocks, Math.min(atOnce, batch.maxRunning()), layout.bytesPerBlock()));
    }

    private EngineConfig config(BatchOptions batch, int stopToken, int defaultBlocks) {
        Integer blocks = deviceBlocks();
        Integer budget = batch.maxBatchTokens();
        return new EngineConfig(batch.blockSize(), blocks != null ? blocks : defaultBlocks,
                budget != null ? budget : EngineConfig.DEFAULT_MAX_BATCH_TOKENS, batch.maxRunning(), !noPrefixCache, stopToken);
    }

    /** KV bytes above which a default pool is not sized (a user may still ask for more). */
    static final long DEFAULT_CAP_BYTES = 2L << 30;

    /** A full context ({@code contextBlocks}) for each running request, within {@link #DEFAULT_CAP_BYTES}; at least one context. */
    static int servingBlocks(int contextBlocks, int maxRunning, long bytesPerBlock) {
        long cap = Math.max(contextBlocks, DEFAULT_CAP_BYTES / bytesPerBlock);
        return (int) Math.min((long) contextBlocks * maxRunning, cap);
    }

    /**
     * Room for the requests that run at once ({@code blocksPerRequest}, each its prompt plus its
     * new tokens; at most {@code atOnce} of them run together, so the {@code atOnce} largest are
     * room for any such set and none waits or is preempted for room), within
     * {@link #DEFAULT_CAP_BYTES}; at least the largest request, so that each fits. More blocks
     * would only keep more of the device prefix cache; the host tier keeps what they would have.
     */
    static int requestBlocks(long[] blocksPerRequest, int atOnce, long bytesPerBlock) {
        long[] sorted = blocksPerRequest.clone();
        java.util.Arrays.sort(sorted);
        long sum = 0;
        for (int i = sorted.length - 1; i >= Math.max(0, sorted.length - atOnce); i--) {
            sum += sorted[i];
        }
        long largest = sorted.length == 0 ? 1 : Math.max(1, sorted[sorted.length - 1]);
        long cap = Math.max(largest, DEFAULT_CAP_BYTES / bytesPerBlock);
        return (int) Math.max(1, Math.min(sum, cap));
    }
}

package io.kvtier.cli;

import io.kvtier.engine.EngineConfig;
import io.kvtier.model.Checkpoint;
import picocli.CommandLine.Option;

/**
 * The real engine's device pool: {@code --device-blocks}, {@code --no-prefix-cache}. With
 * {@link BatchOptions} it gives the {@link EngineConfig} of {@code generate} and {@code serve}.
 */
public final class EngineOptions {

    @Option(names = "--device-blocks", paramLabel = "N",
            description = "blocks in the device KV pool (default: room for 32 full contexts, at most 2 GiB)")
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

    /** The engine's configuration for {@code checkpoint}, with {@code batch}'s scheduler shape. */
    public EngineConfig config(Checkpoint checkpoint, BatchOptions batch, int stopToken) {
        Integer blocks = deviceBlocks();
        Integer budget = batch.maxBatchTokens();
        return new EngineConfig(batch.blockSize(), blocks != null ? blocks : defaultDeviceBlocks(checkpoint, batch.blockSize()),
                budget != null ? budget : EngineConfig.DEFAULT_MAX_BATCH_TOKENS, batch.maxRunning(), !noPrefixCache, stopToken);
    }

    /** Room for 32 full contexts, capped at 2 GiB of KV. */
    static int defaultDeviceBlocks(Checkpoint checkpoint, int blockSize) {
        var layout = checkpoint.config().kvLayout(blockSize);
        long want = 32L * layout.blocksFor(checkpoint.config().seqLen());
        long cap = (2L << 30) / layout.bytesPerBlock();
        return (int) Math.max(1, Math.min(want, cap));
    }
}

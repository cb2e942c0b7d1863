package io.kvtier.engine;

/**
 * Engine settings.
 *
 * @param blockSize      token positions per KV block (default 16)
 * @param deviceBlocks   blocks in the device pool
 * @param maxBatchTokens token budget of one step (decode tokens plus prefill chunk tokens)
 * @param maxRunning     most requests holding device blocks at once
 * @param prefixCaching  reuse device blocks of equal prefixes
 * @param stopToken      token id that ends generation (1 for llama2.c checkpoints); -1 for none
 */
public record EngineConfig(int blockSize, int deviceBlocks, int maxBatchTokens, int maxRunning,
                           boolean prefixCaching, int stopToken) {

    public static final int DEFAULT_BLOCK_SIZE = 16;
    public static final int DEFAULT_MAX_BATCH_TOKENS = 512;
    public static final int DEFAULT_MAX_RUNNING = 256;

    public EngineConfig {
        require(blockSize >= 1, "block size must be at least 1, got " + blockSize);
        require(deviceBlocks >= 1, "device blocks must be at least 1, got " + deviceBlocks);
        require(maxBatchTokens >= 1, "max batch tokens must be at least 1, got " + maxBatchTokens);
        require(maxRunning >= 1, "max running requests must be at least 1, got " + maxRunning);
    }

    /** Defaults with the given block size and pool size. */
    public static EngineConfig of(int blockSize, int deviceBlocks) {
        return new EngineConfig(blockSize, deviceBlocks, DEFAULT_MAX_BATCH_TOKENS, DEFAULT_MAX_RUNNING, true, 1);
    }

    public EngineConfig withMaxBatchTokens(int n) {
        return new EngineConfig(blockSize, deviceBlocks, n, maxRunning, prefixCaching, stopToken);
    }

    public EngineConfig withPrefixCaching(boolean on) {
        return new EngineConfig(blockSize, deviceBlocks, maxBatchTokens, maxRunning, on, stopToken);
    }

    public EngineConfig withStopToken(int token) {
        return new EngineConfig(blockSize, deviceBlocks, maxBatchTokens, maxRunning, prefixCaching, token);
    }

    private static void require(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }
}

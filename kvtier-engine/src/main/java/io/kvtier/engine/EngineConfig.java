package io.kvtier.engine;

import java.util.Set;

/**
 * Engine settings.
 *
 * @param blockSize      token positions per KV block (default 16)
 * @param deviceBlocks   blocks in the device pool
 * @param maxBatchTokens token budget of one step (decode tokens plus prefill chunk tokens)
 * @param maxRunning     most requests holding device blocks at once
 * @param prefixCaching  reuse device blocks of equal prefixes
 * @param stopToken      token id that ends generation (1 for llama2.c checkpoints); -1 for none
 * @param moreStopTokens further ids that end generation (a GGUF model's EOS besides its
 *                       end-of-turn tokens such as {@code <|eot_id|>}, {@code <|im_end|>})
 * @param prefillPriority with offloading on: a waiting request that has no token yet may preempt
 *                       running requests that have theirs to get device blocks for its prefill
 *                       (the victims' KV is in the host tier, so they load it back instead of
 *                       recomputing); see {@link Scheduler}. Ignored without offloading
 */
public record EngineConfig(int blockSize, int deviceBlocks, int maxBatchTokens, int maxRunning,
                           boolean prefixCaching, int stopToken, Set<Integer> moreStopTokens, boolean prefillPriority) {

    public static final int DEFAULT_BLOCK_SIZE = 16;
    public static final int DEFAULT_MAX_BATCH_TOKENS = 512;
    public static final int DEFAULT_MAX_RUNNING = 256;

    public EngineConfig {
        require(blockSize >= 1, "block size must be at least 1, got " + blockSize);
        require(deviceBlocks >= 1, "device blocks must be at least 1, got " + deviceBlocks);
        require(maxBatchTokens >= 1, "max batch tokens must be at least 1, got " + maxBatchTokens);
        require(maxRunning >= 1, "max running requests must be at least 1, got " + maxRunning);
        moreStopTokens = Set.copyOf(moreStopTokens);
    }

    /** Without prefill priority. */
    public EngineConfig(int blockSize, int deviceBlocks, int maxBatchTokens, int maxRunning,
                        boolean prefixCaching, int stopToken, Set<Integer> moreStopTokens) {
        this(blockSize, deviceBlocks, maxBatchTokens, maxRunning, prefixCaching, stopToken, moreStopTokens, false);
    }

    /** One stop token (or -1 for none). */
    public EngineConfig(int blockSize, int deviceBlocks, int maxBatchTokens, int maxRunning,
                        boolean prefixCaching, int stopToken) {
        this(blockSize, deviceBlocks, maxBatchTokens, maxRunning, prefixCaching, stopToken, Set.of());
    }

    /** True when sampling {@code token} ends a request. */
    public boolean isStopToken(int token) {
        return token == stopToken || moreStopTokens.contains(token);
    }

    /** Defaults with the given block size and pool size. */
    public static EngineConfig of(int blockSize, int deviceBlocks) {
        return new EngineConfig(blockSize, deviceBlocks, DEFAULT_MAX_BATCH_TOKENS, DEFAULT_MAX_RUNNING, true, 1);
    }

    public EngineConfig withMaxBatchTokens(int n) {
        return new EngineConfig(blockSize, deviceBlocks, n, maxRunning, prefixCaching, stopToken, moreStopTokens, prefillPriority);
    }

    public EngineConfig withPrefixCaching(boolean on) {
        return new EngineConfig(blockSize, deviceBlocks, maxBatchTokens, maxRunning, on, stopToken, moreStopTokens, prefillPriority);
    }

    public EngineConfig withStopToken(int token) {
        return new EngineConfig(blockSize, deviceBlocks, maxBatchTokens, maxRunning, prefixCaching, token, Set.of(), prefillPriority);
    }

    /** Every id in {@code tokens} ends generation (none when empty). */
    public EngineConfig withStopTokens(int... tokens) {
        Set<Integer> more = new java.util.HashSet<>();
        for (int i = 1; i < tokens.length; i++) more.add(tokens[i]);
        return new EngineConfig(blockSize, deviceBlocks, maxBatchTokens, maxRunning, prefixCaching,
                tokens.length == 0 ? -1 : tokens[0], more, prefillPriority);
    }

    public EngineConfig withPrefillPriority(boolean on) {
        return new EngineConfig(blockSize, deviceBlocks, maxBatchTokens, maxRunning, prefixCaching, stopToken, moreStopTokens, on);
    }

    private static void require(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }
}

package io.kvtier.engine;

import io.kvtier.text.Plural;

/**
 * A request that can never run ({@link Engine#checkFits}): its prompt is longer than the model's
 * context, or its prompt and most new tokens need more blocks than the device pool has. The
 * message says so without naming a flag (the server hands it to a client); a command builds its
 * own line from the same sentence with its flags named ({@link #poolShortfall}) and the values
 * that fit.
 *
 * @param promptTokens the request's prompt length
 * @param maxTokens    its most new tokens
 * @param context      the model's context in token positions
 * @param positions    positions the request can need: prompt + new tokens − 1, at most the context
 * @param blocks       blocks those positions take
 * @param poolBlocks   blocks of the device pool
 * @param blockSize    token positions per block
 */
public final class RequestDoesNotFitException extends IllegalArgumentException {

    private final int promptTokens;
    private final int maxTokens;
    private final int context;
    private final long positions;
    private final int blocks;
    private final int poolBlocks;
    private final int blockSize;

    RequestDoesNotFitException(int promptTokens, int maxTokens, int context, long positions, int blocks, int poolBlocks,
                               int blockSize) {
        super(message(promptTokens, maxTokens, context, positions, blocks, poolBlocks, blockSize));
        this.promptTokens = promptTokens;
        this.maxTokens = maxTokens;
        this.context = context;
        this.positions = positions;
        this.blocks = blocks;
        this.poolBlocks = poolBlocks;
        this.blockSize = blockSize;
    }

    /** Whether the prompt alone is longer than the model's context (else the pool is too small). */
    public boolean promptBeyondContext() {
        return promptTokens > context;
    }

    /** Blocks the request needs: the fewest pool blocks it runs in. */
    public int blocks() {
        return blocks;
    }

    /** The most new tokens that fit the pool with this prompt; below 1 when the prompt alone does not. */
    public long newTokensThatFit() {
        return newTokensThatFit(promptTokens, poolBlocks, blockSize);
    }

    /**
     * "5 prompt tokens and up to 400 new ones need 404 token positions, 26 blocks of 16, but the
     * device pool has 4", the most new tokens and the pool's size each followed by
     * {@code " (flag)"} when its flag is given (null: none, as in this exception's message).
     */
    public String poolShortfall(String maxTokensFlag, String poolFlag) {
        return poolShortfall(promptTokens, maxTokens, positions, blocks, poolBlocks, blockSize, maxTokensFlag, poolFlag);
    }

    private static String poolShortfall(int promptTokens, int maxTokens, long positions, int blocks, int poolBlocks,
                                        int blockSize, String maxTokensFlag, String poolFlag) {
        return promptTokens + " prompt tokens and up to " + maxTokens + " new ones" + flag(maxTokensFlag) + " need " + positions
                + " token positions, " + Plural.count(blocks, "block") + " of " + blockSize + ", but the device pool has "
                + poolBlocks + flag(poolFlag);
    }

    private static String flag(String name) {
        return name == null ? "" : " (" + name + ")";
    }

    private static String message(int promptTokens, int maxTokens, int context, long positions, int blocks, int poolBlocks,
                                  int blockSize) {
        if (promptTokens > context) {
            return "the prompt has " + promptTokens + " tokens, more than the model's context of " + Plural.count(context, "token");
        }
        long fit = newTokensThatFit(promptTokens, poolBlocks, blockSize);
        return poolShortfall(promptTokens, maxTokens, positions, blocks, poolBlocks, blockSize, null, null)
                + (fit >= 1 ? ": at most " + fit + " new tokens fit" : ": not even the prompt fits");
    }

    // The last token sampled needs no KV slot: a pool of P positions holds P − prompt + 1 new tokens.
    private static long newTokensThatFit(int promptTokens, int poolBlocks, int blockSize) {
        return (long) poolBlocks * blockSize - promptTokens + 1;
    }
}

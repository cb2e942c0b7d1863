package io.kvtier.cli;

import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The scheduler's shape, shared by every command that runs the engine's scheduler (the real one in
 * {@code generate}, {@code serve} and {@code bench}, the same one over a simulated GPU in
 * {@code replay}): {@code --block-size}, {@code --max-batch-tokens}, {@code --max-running}.
 * Defaults are the command's ({@link FlagDefaults}); a command whose default depends on more than
 * itself describes it in its resource bundle, under the option's description key.
 */
public final class BatchOptions {

    @Spec(Spec.Target.MIXEE)
    CommandSpec mixee;

    @Option(names = "--block-size", converter = TokenCount.class, paramLabel = "N", description = "token positions per KV block (default ${DEFAULT-VALUE})")
    Integer blockSize;

    @Option(names = "--max-batch-tokens", converter = TokenCount.class, paramLabel = "N", descriptionKey = "max-batch-tokens",
            description = "token budget of one engine step: decode tokens, then prefill chunks (default ${DEFAULT-VALUE})")
    Integer maxBatchTokens;

    @Option(names = "--max-running", paramLabel = "N",
            description = "most requests running (holding device blocks) at once (default ${DEFAULT-VALUE})")
    Integer maxRunning;

    /** Token positions per block, at least 1 (every command has a default). */
    public int blockSize() {
        return Checks.atLeast(blockSize, 1, "--block-size");
    }

    /**
     * The step budget, at least 1, or null for the command's own default where it depends on more
     * than the command ({@code replay}: the mode). {@code 0}, formerly "the default" in {@code replay},
     * is taken as absent with a deprecation note.
     */
    public Integer maxBatchTokens() {
        maxBatchTokens = Deprecations.zeroMeansDefault(maxBatchTokens, "--max-batch-tokens"); // noted once
        Integer v = maxBatchTokens;
        return v == null ? null : Checks.atLeast(v, 1, "--max-batch-tokens");
    }

    /** The most running requests, at least 1 (every command has a default). */
    public int maxRunning() {
        return Checks.atLeast(maxRunning, 1, "--max-running");
    }

    /** Whether {@code --block-size} was given, not the command's default. */
    boolean blockSizeGiven() {
        return mixee != null && mixee.commandLine().getParseResult().hasMatchedOption("--block-size");
    }

    /** Lowers the default block size (never a value the user gave: see {@link OffloadOptions#fitChunk}). */
    void lowerDefaultBlockSize(int tokens) {
        if (blockSizeGiven()) {
            throw new IllegalStateException("--block-size was given");
        }
        blockSize = tokens;
    }

    /** Sets {@code --max-running} (a deprecated alias's setter). */
    void setMaxRunning(int n) {
        maxRunning = n;
    }

    /** Checks all three values (each accessor refuses a bad one with one line), before anything is loaded. */
    public void check() {
        blockSize();
        maxBatchTokens();
        maxRunning();
    }
}

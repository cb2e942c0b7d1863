package io.kvtier.cli;

import picocli.CommandLine.Option;

/**
 * {@code --max-tokens N}: the most new tokens a request generates (a stop token, the context, or in
 * {@code replay} the trace's {@code output_length} may end it sooner). The default is the
 * command's ({@link FlagDefaults}).
 */
public final class MaxTokensOptions {

    @Option(names = "--max-tokens", converter = TokenCount.class, paramLabel = "N", descriptionKey = "max-tokens",
            description = "most new tokens per request (default ${DEFAULT-VALUE})")
    Integer maxTokens;

    /** The value, at least 1, or null if the command has no default and none was given. */
    public Integer maxTokens() {
        if (maxTokens != null) {
            Checks.atLeast(maxTokens, 1, "--max-tokens");
        }
        return maxTokens;
    }

    /** Sets the value (a deprecated alias's setter). */
    void set(int n) {
        maxTokens = n;
    }
}

package io.kvtier.cli;

import picocli.CommandLine.Option;

/** {@code --threads N}: compute threads of the model's forward pass (generate, serve, bench). */
public final class ThreadsOptions {

    @Option(names = "--threads", paramLabel = "N", description = "compute threads of the forward pass (default: one per core)")
    Integer threads;

    /**
     * Threads to use, or 0 for one per core (the engine's convention). {@code --threads 0},
     * formerly "the default", is taken as absent with a deprecation note.
     */
    public int threads() {
        threads = Deprecations.zeroMeansDefault(threads, "--threads"); // noted once
        Integer v = threads;
        return v == null ? 0 : Checks.atLeast(v, 1, "--threads");
    }

    /** Threads to use, with one per core resolved. */
    public int resolved() {
        int t = threads();
        return t > 0 ? t : Runtime.getRuntime().availableProcessors();
    }
}

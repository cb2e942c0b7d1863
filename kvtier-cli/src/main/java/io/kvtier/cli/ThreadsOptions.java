package io.kvtier.cli;

import picocli.CommandLine.Option;

/** {@code --threads N}: compute threads of the model's forward pass (generate, serve, bench). */
public final class ThreadsOptions {

    @Option(names = "--threads", paramLabel = "N", description = "compute threads of the forward pass (default: one per core)")
    @Most(fourPerCore = true)
    Integer threads;

    /**
     * Threads to use, or 0 for one per core (the engine's convention). {@code --threads 0},
     * formerly "the default", is taken as absent with a deprecation note; more than 4 per core is
     * refused.
     */
    public int threads() {
        threads = Deprecations.zeroMeansDefault(threads, "--threads"); // noted once
        Integer v = threads;
        return v == null ? 0 : Checks.atMostFourPerCore(Checks.atLeast(v, 1, "--threads"), "--threads");
    }

    /**
     * One line on stderr when {@code --threads} is above the processors available, for
     * {@code command} (e.g. "generate"), else nothing: not refused (oversubscribing is a thing to
     * measure too), but every step pays for it. Standard output is flushed first, so that where both
     * go to one terminal or file the line does not land inside one of its lines.
     *
     * @param slower what is slower, e.g. "every step is slower"
     * @param anyway what goes on, e.g. "run anyway"
     */
    void warnIfOversubscribed(String command, String slower, String anyway) {
        String line = oversubscribed(command, resolved(), Runtime.getRuntime().availableProcessors(), slower, anyway);
        if (line != null) {
            System.out.flush();
            System.err.println(line);
        }
    }

    /** {@link #warnIfOversubscribed(String, String, String)} for a command that runs requests (generate, serve). */
    void warnIfOversubscribed(String command) {
        warnIfOversubscribed(command, "every step is slower", "run anyway");
    }

    /** {@link #warnIfOversubscribed}'s line for {@code threads} on {@code processors}, or null when they are enough. */
    static String oversubscribed(String command, int threads, int processors, String slower, String anyway) {
        return threads <= processors ? null : String.format(java.util.Locale.ROOT, "kvtier: %s: --threads %d is more"
                + " than the %s available: the threads take turns, so %s than with --threads %d (%s)", command, threads,
                io.kvtier.text.Plural.count(processors, "processor"), slower, processors, anyway);
    }

    /** Threads to use, with one per core resolved. */
    public int resolved() {
        return io.kvtier.engine.ComputePool.threads(threads());
    }
}

package io.kvtier.bench;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.util.function.LongSupplier;

/**
 * Warm-up before a timed figure: runs the bench's own work until the JIT compiler has stopped
 * compiling, so that the figure is that of compiled code. A fixed time is not enough: on the
 * 110M Q4_0 shape single-sequence decode was still rising after 2 s (one 64-token run every
 * 0.2 s: 244, 207, 247, 284 ... 378 tokens/s over 8 s) and {@code bench generate} reported 224-264
 * tokens/s where the steady state is 300-350.
 *
 * <p>The work runs at least {@code minNanos}, then until the JVM's total compilation time
 * ({@link CompilationMXBean}, milliseconds over every compiler thread) has not grown for
 * {@code quietNanos} of whole runs, at most {@code maxNanos}. A JVM that does not report
 * compilation time gets the minimum only, and counts as quiet.
 */
public final class JitWarmUp {

    /** How long a warm-up took and whether it ended with a run free of compilation. */
    public record Result(double seconds, boolean quiet) {

        /** For a bench's report, e.g. "3.4 s" or "20.0 s, still compiling". */
        public String describe() {
            return String.format(java.util.Locale.ROOT, "%.1f s%s", seconds, quiet ? "" : ", still compiling");
        }
    }

    private final long minNanos;
    private final long maxNanos;
    private final long quietNanos;
    private final LongSupplier compileMillis;

    /**
     * @param minNanos      least warm-up, nanoseconds
     * @param maxNanos      most warm-up, nanoseconds (at least {@code minNanos})
     * @param quietNanos    time of whole runs without compilation that ends it, nanoseconds (0: one run)
     * @param compileMillis total compilation time so far, milliseconds; -1 when unknown
     */
    JitWarmUp(long minNanos, long maxNanos, long quietNanos, LongSupplier compileMillis) {
        if (minNanos < 0 || maxNanos < minNanos || quietNanos < 0) {
            throw new IllegalArgumentException("warm-up of " + minNanos + " to " + maxNanos + " ns, quiet " + quietNanos);
        }
        this.minNanos = minNanos;
        this.maxNanos = maxNanos;
        this.quietNanos = quietNanos;
        this.compileMillis = compileMillis;
    }

    /**
     * At least 2 s, at most 20 s, ended by 0.5 s without compilation (a run of a few milliseconds
     * that compiled nothing says little), on this JVM's compilation time.
     */
    public static JitWarmUp ofThisJvm() {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        LongSupplier millis = jit != null && jit.isCompilationTimeMonitoringSupported()
                ? jit::getTotalCompilationTime : () -> -1;
        return new JitWarmUp(2_000_000_000L, 20_000_000_000L, 500_000_000L, millis);
    }

    /** Runs {@code work} as the class doc says; its results are thrown away. */
    public Result run(Runnable work) {
        long start = System.nanoTime();
        long lastCompiled = compileMillis.getAsLong();
        long quietSince = start;
        while (true) {
            work.run();
            long now = System.nanoTime();
            long compiled = compileMillis.getAsLong();
            boolean compiledInRun = compiled != lastCompiled;
            if (compiledInRun) {
                lastCompiled = compiled;
                quietSince = now;
            }
            boolean quiet = lastCompiled < 0 || (!compiledInRun && now - quietSince >= quietNanos);
            if (now - start >= maxNanos || (now - start >= minNanos && quiet)) {
                return new Result((now - start) / 1e9, quiet);
            }
        }
    }
}

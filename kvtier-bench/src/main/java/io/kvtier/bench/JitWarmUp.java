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
 * <p>The work runs at least {@code minNanos}, then until the JIT has done nothing for
 * {@code quietNanos} of whole runs, at most {@code maxNanos}: neither the JVM's total compilation
 * time ({@link CompilationMXBean}, milliseconds over every compiler thread) nor the run time of
 * its C2 threads ({@link CompilerThreads}) has grown. The first alone grows only when a compile
 * ends: a C2 compile of the read loop that took seconds on a busy machine looked quiet, and
 * {@code bench generate}'s scaling rounds then read 0.3 GB/s in C1's code where its passes had read
 * 83. A JVM that reports neither gets the minimum only, and counts as quiet.
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
    private final LongSupplier compiling;

    /**
     * @param minNanos      least warm-up, nanoseconds
     * @param maxNanos      most warm-up, nanoseconds (at least {@code minNanos})
     * @param quietNanos    time of whole runs without compilation that ends it, nanoseconds (0: one run)
     * @param compiling     a reading that grows while the JIT compiles (compilation time so far); -1 when unknown
     */
    JitWarmUp(long minNanos, long maxNanos, long quietNanos, LongSupplier compiling) {
        if (minNanos < 0 || maxNanos < minNanos || quietNanos < 0) {
            throw new IllegalArgumentException("warm-up of " + minNanos + " to " + maxNanos + " ns, quiet " + quietNanos);
        }
        this.minNanos = minNanos;
        this.maxNanos = maxNanos;
        this.quietNanos = quietNanos;
        this.compiling = compiling;
    }

    /**
     * At least 2 s, at most 20 s, ended by 0.5 s without compilation (a run of a few milliseconds
     * that compiled nothing says little), on this JVM's compilers.
     */
    public static JitWarmUp ofThisJvm() {
        return ofThisJvm(2_000_000_000L, 20_000_000_000L, 500_000_000L);
    }

    /**
     * On this JVM's compilers, with another schedule: for work of its own inside a bench whose
     * figures already had their warm-up (nanoseconds, as the constructor's).
     *
     * @throws IllegalArgumentException as the constructor
     */
    public static JitWarmUp ofThisJvm(long minNanos, long maxNanos, long quietNanos) {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        LongSupplier millis = jit != null && jit.isCompilationTimeMonitoringSupported()
                ? jit::getTotalCompilationTime : () -> -1;
        java.util.List<java.nio.file.Path> c2 = CompilerThreads.ofThisProcess();
        // A compile that ended moves the first term, one in progress the second.
        LongSupplier compiling = () -> millis.getAsLong() < 0 && c2.isEmpty() ? -1
                : Math.max(0, millis.getAsLong()) * 1_000_000L + CompilerThreads.runNanos(c2);
        return new JitWarmUp(minNanos, maxNanos, quietNanos, compiling);
    }

    /** Runs {@code work} as the class doc says; its results are thrown away. */
    public Result run(Runnable work) {
        long start = System.nanoTime();
        long lastCompiled = compiling.getAsLong();
        long quietSince = start;
        while (true) {
            work.run();
            long now = System.nanoTime();
            long compiled = compiling.getAsLong();
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

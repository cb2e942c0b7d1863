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
 * {@code quietNanos} of whole runs, or until the next run would end past {@code maxNanos} if it took
 * as long as the longest so far (stopping only once a run had ended past it overran by up to a run:
 * 22.1 s of a 20 s cap in a README sample). Quiet means neither the JVM's total compilation
 * time ({@link CompilationMXBean}, milliseconds over every compiler thread) nor the run time of
 * its C2 threads ({@link CompilerThreads}) has grown. The first alone grows only when a compile
 * ends: a C2 compile of the read loop that took seconds on a busy machine looked quiet, and
 * {@code bench generate}'s scaling rounds then read 0.3 GB/s in C1's code where its passes had read
 * 83. A JVM that reports neither gets the minimum only, and counts as quiet.
 */
public final class JitWarmUp {

    /** How long a warm-up took and whether it ended with a run free of compilation. */
    public record Result(double seconds, boolean quiet) {

        /**
         * For a bench's report, e.g. "3.4 s" or "20.0 s (still compiling)": in parentheses, since
         * the reports list several in one line separated by commas.
         */
        public String describe() {
            return String.format(java.util.Locale.ROOT, "%.1f s%s", seconds, quiet ? "" : " (still compiling)");
        }
    }

    private final long minNanos;
    private final long maxNanos;
    private final long quietNanos;
    private final LongSupplier compiling;
    private final LongSupplier clock;

    /**
     * @param minNanos      least warm-up, nanoseconds
     * @param maxNanos      most warm-up, nanoseconds (at least {@code minNanos})
     * @param quietNanos    time of whole runs without compilation that ends it, nanoseconds (0: one run)
     * @param compiling     a reading that grows while the JIT compiles (compilation time so far); -1 when unknown
     */
    JitWarmUp(long minNanos, long maxNanos, long quietNanos, LongSupplier compiling) {
        this(minNanos, maxNanos, quietNanos, compiling, System::nanoTime);
    }

    /** As the other constructor, on {@code clock} (nanoseconds) instead of {@link System#nanoTime}: tests' fake time. */
    JitWarmUp(long minNanos, long maxNanos, long quietNanos, LongSupplier compiling, LongSupplier clock) {
        if (minNanos < 0 || maxNanos < minNanos || quietNanos < 0) {
            throw new IllegalArgumentException("warm-up of " + minNanos + " to " + maxNanos + " ns, quiet " + quietNanos);
        }
        this.minNanos = minNanos;
        this.maxNanos = maxNanos;
        this.quietNanos = quietNanos;
        this.compiling = compiling;
        this.clock = clock;
    }

    /**
     * At least 2 s, ended by 0.5 s without compilation (a run of a few milliseconds that compiled
     * nothing says little) or before a run that would end past 20 s, on this JVM's compilers.
     * Property {@code kvtier.bench.warmupMaxMillis} lowers the 20 s (and the 2 s with it): for tests
     * and quick looks at a bench's output, whose figures are then those of less compiled code.
     */
    public static JitWarmUp ofThisJvm() {
        return ofThisJvm(20_000_000_000L);
    }

    /**
     * As {@link #ofThisJvm()}, ended before a run that would end past {@code maxNanos} instead of
     * 20 s (and at least {@code maxNanos} when that is under 2 s); the property lowers it too.
     */
    public static JitWarmUp ofThisJvm(long maxNanos) {
        long max = Math.min(maxNanos, Math.max(0, Long.getLong("kvtier.bench.warmupMaxMillis", 20_000)) * 1_000_000L);
        return ofThisJvm(Math.min(2_000_000_000L, max), max, 500_000_000L);
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

    /**
     * The schedule in words, for a bench's report: "at least 2 s, then until 0.5 s of whole runs
     * passed with no JIT compilation or the next run would end past 20 s at the longest run's time".
     */
    public String schedule() {
        return String.format(java.util.Locale.ROOT, "at least %s s, then until %s s of whole runs passed with no JIT"
                + " compilation or the next run would end past %s s at the longest run's time",
                seconds(minNanos), seconds(quietNanos), seconds(maxNanos));
    }

    /** Seconds without a needless ".0": "2", "0.5", "20". */
    private static String seconds(long nanos) {
        return java.math.BigDecimal.valueOf(nanos, 9).stripTrailingZeros().toPlainString();
    }

    /** Runs {@code work} as the class doc says (once at least); its results are thrown away. */
    public Result run(Runnable work) {
        long start = clock.getAsLong();
        long lastCompiled = compiling.getAsLong();
        long quietSince = start;
        long longest = 0;
        long runStart = start;
        while (true) {
            work.run();
            long now = clock.getAsLong();
            longest = Math.max(longest, now - runStart);
            runStart = now;
            long compiled = compiling.getAsLong();
            boolean compiledInRun = compiled != lastCompiled;
            if (compiledInRun) {
                lastCompiled = compiled;
                quietSince = now;
            }
            boolean quiet = lastCompiled < 0 || (!compiledInRun && now - quietSince >= quietNanos);
            long elapsed = now - start;
            // The least first; past it, no run that would end past the most (the subtraction cannot overflow).
            if (elapsed >= minNanos && (quiet || elapsed >= maxNanos || longest > maxNanos - elapsed)) {
                return new Result(elapsed / 1e9, quiet);
            }
        }
    }
}

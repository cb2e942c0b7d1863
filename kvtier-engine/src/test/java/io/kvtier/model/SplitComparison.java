package io.kvtier.model;

import java.lang.foreign.Arena;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.ForkJoinPool;

/**
 * Benchmark (not a test): single-sequence decode with the pool's ways of cutting a range into
 * parts, in one JVM, the variants taking turns every {@link #BLOCK} tokens (A B C A B C), each with
 * its own pool. Per variant: every decode step's wall time (median, 10th percentile, best), the
 * caller's wait for helpers' parts ({@link Parallel#waitNanos()}) per token, the share of parts the
 * caller ran, hand-offs per token, and the steps' 10th percentile as a fraction of the bound: the
 * best of the read passes ({@link RowReader}, the same thread count) taken before each turn, scaled
 * to the weight bytes of a token, over that step time. On a loaded machine the low percentiles are
 * the moments when the threads ran undisturbed, the nearest thing to an idle figure. Variants:
 * {@code equal4} (equal parts, 4 per thread: the kind before), {@code guidedN} (shrinking parts,
 * N per thread), {@code one} (1 thread), each optionally {@code ~minPartWork} (1: always N parts per
 * thread) and {@code @spinNanos}.
 * <pre>
 * java --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED \
 *      -cp kvtier-engine/target/classes:kvtier-engine/target/test-classes:kvtier-cli/target/kvtier.jar \
 *      io.kvtier.model.SplitComparison /work/m/15m.bin 12 equal4 guided4 guided8 one
 * </pre>
 */
public final class SplitComparison {

    /** Tokens of one turn; the first step of a turn is not counted (the previous variant's helper may still spin). */
    private static final int BLOCK = 16;
    private static final int PROMPT = 64;
    /** Turns per variant and round: 128 decode steps. */
    private static final int MAX_TURNS = 8;
    private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();

    private SplitComparison() {
    }

    private record Variant(String name, ForkJoinPool pool, Parallel parallel, Transformer t, RowReader reader) {
    }

    public static void main(String[] args) {
        Path path = Path.of(args[0]);
        int rounds = Integer.parseInt(args[1]);
        String[] names = Arrays.copyOfRange(args, 2, args.length);
        try (Model m = Models.load(path); Arena arena = Arena.ofShared()) {
            long bytes = weightBytes(m);
            int dim = m.config().dim();
            int rows = (int) (bytes / (dim * 4L));
            MemorySegment buffer = arena.allocate((long) rows * dim * 4, 64);
            buffer.fill((byte) 0x3f);
            Variant[] vs = new Variant[names.length];
            for (int i = 0; i < names.length; i++) {
                vs[i] = variant(names[i], m);
            }
            int steps = m.config().seqLen() - PROMPT - 1;
            int turns = Math.min(steps / BLOCK, MAX_TURNS);
            double[][] stepNs = new double[vs.length][rounds * turns * (BLOCK - 1)];
            double[][] stepCpu = new double[vs.length][rounds * turns * (BLOCK - 1)];
            double[][] passCpu = new double[vs.length][rounds * turns * 3];
            long[] bestPass = new long[vs.length];
            Arrays.fill(bestPass, Long.MAX_VALUE);
            long[][] counters = new long[vs.length][5];   // wait ns, parts, caller parts, splits, tokens
            float sink = 0;
            for (int r = -1; r < rounds; r++) {   // round -1 warms up
                LogitsDriver[] ds = new LogitsDriver[vs.length];
                float[][] logits = new float[vs.length][];
                for (int v = 0; v < vs.length; v++) {
                    ds[v] = new LogitsDriver(vs[v].t(), 16, m.config().seqLen());
                    logits[v] = ds[v].feed(new int[PROMPT]);
                }
                for (int turn = 0; turn < turns; turn++) {
                    for (int v = 0; v < vs.length; v++) {
                        Variant x = vs[v];
                        for (int p = 0; p < 3; p++) {
                            long c = MX.getCurrentThreadCpuTime();
                            long t0 = System.nanoTime();
                            sink += x.reader().read(buffer, dim, rows);
                            long pass = System.nanoTime() - t0;
                            if (r >= 0) {
                                bestPass[v] = Math.min(bestPass[v], pass);
                                passCpu[v][(r * turns + turn) * 3 + p] = MX.getCurrentThreadCpuTime() - c;
                            }
                        }
                        long w0 = x.parallel().waitNanos(), p0 = x.parallel().parts(), c0 = x.parallel().callerParts();
                        long s0 = x.parallel().splits();
                        for (int i = 0; i < BLOCK; i++) {
                            long c = MX.getCurrentThreadCpuTime();
                            long t0 = System.nanoTime();
                            logits[v] = ds[v].feed(LogitsDriver.argmax(logits[v]));
                            long t = System.nanoTime() - t0;
                            if (r >= 0 && i > 0) {
                                stepNs[v][(r * turns + turn) * (BLOCK - 1) + i - 1] = t;
                                stepCpu[v][(r * turns + turn) * (BLOCK - 1) + i - 1] = MX.getCurrentThreadCpuTime() - c;
                            }
                        }
                        if (r >= 0) {
                            counters[v][0] += x.parallel().waitNanos() - w0;
                            counters[v][1] += x.parallel().parts() - p0;
                            counters[v][2] += x.parallel().callerParts() - c0;
                            counters[v][3] += x.parallel().splits() - s0;
                            counters[v][4] += BLOCK;
                        }
                    }
                }
                for (LogitsDriver d : ds) {
                    d.close();
                }
            }
            System.out.printf(Locale.ROOT, "%s: %d rounds of %d decode steps (positions %d-%d), %d-token turns, %.1f MB of weights a token%n",
                    path.getFileName(), rounds, turns * BLOCK, PROMPT, PROMPT + turns * BLOCK - 1, BLOCK, bytes / 1e6);
            for (int v = 0; v < vs.length; v++) {
                double[] s = stepNs[v].clone();
                Arrays.sort(s);
                double p10 = s[s.length / 10];
                double bound = bestPass[v] * ((double) bytes / buffer.byteSize());
                long[] c = counters[v];
                System.out.printf(Locale.ROOT,
                        "  %-14s step median %7.1f us, p10 %7.1f, best %7.1f; p10 = %.3f of the bound (best pass %.1f GB/s);"
                                + " caller waits %6.1f us a token, runs %.2f of the parts, %.1f hand-offs a token%n",
                        vs[v].name(), s[s.length / 2] / 1e3, p10 / 1e3, s[0] / 1e3, bound / p10,
                        buffer.byteSize() / (double) bestPass[v], c[0] / 1e3 / c[4], c[1] == 0 ? 1.0 : c[2] / (double) c[1],
                        c[3] / (double) c[4]);
                // The caller's CPU time: on 1 thread, the step against the pass in CPU time is the
                // fraction of the bound with the other jobs' waits for a CPU taken out.
                double stepC = median(stepCpu[v]), passC = median(passCpu[v]) * ((double) bytes / buffer.byteSize());
                System.out.printf(Locale.ROOT, "  %-14s caller CPU a step %7.1f us (median), read pass's CPU for the same bytes %7.1f us: %.3f%n",
                        "", stepC / 1e3, passC / 1e3, passC / stepC);
            }
            if (Float.isNaN(sink)) {
                throw new AssertionError();
            }
            for (Variant x : vs) {
                x.t().close();
                x.reader().close();
                x.pool().shutdownNow();
            }
        }
    }

    private static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }

    private static Variant variant(String spec, Model m) {
        String[] parts = spec.split("@");
        long spin = parts.length > 1 ? Long.parseLong(parts[1]) : Parallel.SPIN_NANOS;
        String[] kindAndWork = parts[0].split("~");
        String kind = kindAndWork[0];
        long minPartWork = kindAndWork.length > 1 ? Long.parseLong(kindAndWork[1]) : Parallel.MIN_PART_WORK;
        int threads = kind.equals("one") ? 1 : 2;
        ForkJoinPool pool = new ForkJoinPool(threads);
        Parallel p = kind.equals("one") ? new Parallel(pool)
                : new Parallel(pool, spin, Parallel.MIN_PARALLEL_WORK, kind.startsWith("guided"),
                Integer.parseInt(kind.replaceAll("[a-z]", "")), minPartWork);
        return new Variant(spec, pool, p, new Transformer(m, Kernels.best(), p), new RowReader(threads));
    }

    /** Bytes of the matrices a token reads (as {@code BandwidthBound.weightBytesPerToken}). */
    private static long weightBytes(Model m) {
        long bytes = m.classifier().data().byteSize();
        for (Model.Matrix x : Model.Matrix.values()) {
            for (int l = 0; l < m.config().layers(); l++) {
                bytes += m.matrix(x, l).data().byteSize();
            }
        }
        return bytes;
    }
}

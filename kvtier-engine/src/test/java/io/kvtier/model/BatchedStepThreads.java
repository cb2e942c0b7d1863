package io.kvtier.model;

import static io.kvtier.model.BatchedDecodeComparison.median;

import io.kvtier.kv.KvLayout;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Benchmark (not a test): how a 32-sequence decode step of {@link Transformer#forward} uses two
 * threads (issue 16: 32-sequence decode at least 8x single at 2 threads). One JVM, the same batch
 * at 1 and at 2 threads alternately (positions {@code P..P+7} over a slab prefilled to {@code P});
 * per step: wall time, the calling thread's CPU, the pool workers' CPU, the hand-offs, and, per
 * thread (0 = the caller, 1 = the helper), the wall time spent inside each kind of kernel (a
 * decorator of {@link Kernels#best()} timing every call with {@link System#nanoTime()}):
 * products ({@link Kernels#matmulPacked}), attention ({@link Kernels#scoresBlock},
 * {@link Kernels#softmax}, {@link Kernels#weightedSumBlock}), packing ({@link Kernels#packRows}),
 * element-wise ({@link Kernels#rmsnorm}, {@link Kernels#add}, {@link Kernels#swiglu}).
 * {@code caller outside kernels} is the step's wall time the caller spends in serial code that is
 * no kernel (embedding, RoPE, K/V writes, logit copies) or waiting for a helper's part;
 * {@code helper outside kernels} is the helper's spinning, parked or descheduled time.
 * <pre>
 * java --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED \
 *      -cp kvtier-core/target/classes:kvtier-engine/target/classes:kvtier-engine/target/test-classes:kvtier-cli/target/kvtier.jar \
 *      io.kvtier.model.BatchedStepThreads /work/m/15m.bin [rounds] [position]
 * </pre>
 */
public final class BatchedStepThreads {

    private static final int SEQUENCES = BatchedStepPhases.SEQUENCES, STEPS = BatchedStepPhases.STEPS;
    private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    private static final String[] KINDS = {"products", "attention", "packing", "element-wise"};

    private BatchedStepThreads() {
    }

    public static void main(String[] args) {
        Path path = Path.of(args[0]);
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 7;
        int position = args.length > 2 ? Integer.parseInt(args[2]) : 128;
        StepOverheadComparison.Pool one = StepOverheadComparison.Pool.of(1);
        StepOverheadComparison.Pool two = StepOverheadComparison.Pool.of(2);
        Probe probe = new Probe(Kernels.best());
        Parallel p1 = new Parallel(one.pool());
        Parallel p2 = new Parallel(two.pool());
        try (Checkpoint m = Checkpoint.load(path);
             Transformer t1 = new Transformer(m, probe, p1);
             Transformer t2 = new Transformer(m, probe, p2);
             Arena arena = Arena.ofShared()) {
            t1.reuseLogitArrays();   // as the engine does
            t2.reuseLogitArrays();
            ModelConfig c = m.config();
            KvLayout layout = c.kvLayout(16);
            int blocksPerSeq = layout.blocksFor(position + STEPS + 1);
            MemorySegment slab = arena.allocate(layout.bytesPerBlock() * blocksPerSeq * SEQUENCES, 64);
            int[][] tables = BatchedStepPhases.prefill(t1, blocksPerSeq, position, slab, layout);
            Transformer[] ts = {t1, t2};
            Parallel[] ps = {p1, p2};
            StepOverheadComparison.Pool[] pools = {one, two};
            // [variant][measure][round]: wall, caller CPU, worker CPU, splits, wakes (per step), then per thread and kind
            int measures = 5 + 2 * KINDS.length;
            double[][][] v = new double[2][measures][rounds];
            for (int r = -3; r < rounds; r++) {
                for (int x = 0; x < 2; x++) {
                    probe.reset(Thread.currentThread());
                    long s0 = ps[x].splits(), w0 = ps[x].wakes();
                    long c0 = MX.getCurrentThreadCpuTime(), h0 = pools[x].workerCpu();
                    long t0 = System.nanoTime();
                    for (int step = 0; step < STEPS; step++) {
                        ts[x].forward(BatchedStepPhases.batch(c, tables, position, step), slab, layout);
                    }
                    long wall = System.nanoTime() - t0;
                    if (r < 0) {
                        continue;
                    }
                    v[x][0][r] = wall / 1e6 / STEPS;
                    v[x][1][r] = (MX.getCurrentThreadCpuTime() - c0) / 1e6 / STEPS;
                    v[x][2][r] = (pools[x].workerCpu() - h0) / 1e6 / STEPS;
                    v[x][3][r] = (ps[x].splits() - s0) / (double) STEPS;
                    v[x][4][r] = (ps[x].wakes() - w0) / (double) STEPS;
                    for (int th = 0; th < 2; th++) {
                        for (int k = 0; k < KINDS.length; k++) {
                            v[x][5 + th * KINDS.length + k][r] = probe.nanos[th][k] / 1e6 / STEPS;
                        }
                    }
                }
            }
            System.out.printf(Locale.ROOT, "%s, %d sequences at positions %d-%d, kernels %s; ms per step, median of %d rounds (1 and 2 threads alternating)%n",
                    path.getFileName(), SEQUENCES, position, position + STEPS - 1, Kernels.best().name(), rounds);
            String[] names = {"wall", "caller CPU", "pool workers' CPU", "hand-offs (count)", "helper wakes (count)"};
            System.out.printf(Locale.ROOT, "  %-36s %9s %9s%n", "", "1 thread", "2 threads");
            for (int i = 0; i < 5; i++) {
                System.out.printf(Locale.ROOT, "  %-36s %9.2f %9.2f%n", names[i], median(v[0][i]), median(v[1][i]));
            }
            for (int th = 0; th < 2; th++) {
                double[] inKernels = new double[2];
                for (int k = 0; k < KINDS.length; k++) {
                    int i = 5 + th * KINDS.length + k;
                    inKernels[0] += median(v[0][i]);
                    inKernels[1] += median(v[1][i]);
                    System.out.printf(Locale.ROOT, "  %-36s %9.2f %9.2f%n", (th == 0 ? "caller: " : "helper: ") + KINDS[k] + " (wall)",
                            median(v[0][i]), median(v[1][i]));
                }
                System.out.printf(Locale.ROOT, "  %-36s %9.2f %9.2f%n", (th == 0 ? "caller" : "helper") + " outside kernels",
                        median(v[0][0]) - inKernels[0], median(v[1][0]) - inKernels[1]);
            }
            double[] ratio = new double[rounds];
            for (int r = 0; r < rounds; r++) {
                ratio[r] = v[0][0][r] / v[1][0][r];
            }
            System.out.printf(Locale.ROOT, "  speed-up of 2 threads (wall, per-round ratio, median) %.2f%n", median(ratio));
        } finally {
            one.pool().shutdownNow();
            two.pool().shutdownNow();
        }
    }

    /** {@link Kernels#best()} with the wall time of every call summed per thread (caller or not) and kind. */
    private static final class Probe extends BatchedStepPhases.Delegate {
        /** [0 caller, 1 any other thread][kind]: nanoseconds since {@link #reset}; each row written by one thread at 2 threads. */
        final long[][] nanos = new long[2][KINDS.length];
        private Thread caller;

        Probe(Kernels k) {
            super(k);
        }

        void reset(Thread caller) {
            this.caller = caller;
            for (long[] row : nanos) {
                java.util.Arrays.fill(row, 0);
            }
        }

        private void add(int kind, long t0) {
            nanos[Thread.currentThread() == caller ? 0 : 1][kind] += System.nanoTime() - t0;
        }

        @Override
        public void matmulPacked(MemorySegment w, int in, int out, float[] packed, int n, float[] y, int rowFrom, int rowTo) {
            long t0 = System.nanoTime();
            k.matmulPacked(w, in, out, packed, n, y, rowFrom, rowTo);
            add(0, t0);
        }

        @Override
        public void scoresBlock(MemorySegment kk, long rowByteOff, long slotBytes, int count, int hFrom, int hTo, int group,
                                int n, float[] q, int qOff, float scale, float[] scores, int sOff, int sStride) {
            long t0 = System.nanoTime();
            k.scoresBlock(kk, rowByteOff, slotBytes, count, hFrom, hTo, group, n, q, qOff, scale, scores, sOff, sStride);
            add(1, t0);
        }

        @Override
        public void softmax(float[] x, int off, int n) {
            long t0 = System.nanoTime();
            k.softmax(x, off, n);
            add(1, t0);
        }

        @Override
        public void weightedSumBlock(MemorySegment v, long rowByteOff, long slotBytes, int count, int hFrom, int hTo,
                                     int group, int n, float[] w, int wOff, int wStride, float[] y, int yOff) {
            long t0 = System.nanoTime();
            k.weightedSumBlock(v, rowByteOff, slotBytes, count, hFrom, hTo, group, n, w, wOff, wStride, y, yOff);
            add(1, t0);
        }

        @Override
        public void packRows(float[] x, int n, int in, float[] packed) {
            long t0 = System.nanoTime();
            k.packRows(x, n, in, packed);
            add(2, t0);
        }

        @Override
        public void rmsnorm(float[] out, int outOff, float[] x, int xOff, MemorySegment weight, int n, float eps) {
            long t0 = System.nanoTime();
            k.rmsnorm(out, outOff, x, xOff, weight, n, eps);
            add(3, t0);
        }

        @Override
        public void add(float[] y, int yOff, float[] x, int xOff, int n) {
            long t0 = System.nanoTime();
            k.add(y, yOff, x, xOff, n);
            add(3, t0);
        }

        @Override
        public void swiglu(float[] gate, int gOff, float[] up, int uOff, int n) {
            long t0 = System.nanoTime();
            k.swiglu(gate, gOff, up, uOff, n);
            add(3, t0);
        }
    }
}

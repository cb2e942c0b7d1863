package io.kvtier.model;

import java.lang.foreign.Arena;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Locale;
import java.util.Random;

/**
 * Benchmark (not a test): the batched F32 product on one thread, along weight rows (4 x 4 tiles,
 * lane reductions; {@link VectorKernels#matmulRowwise}) against the packed batch
 * ({@link PackedMatmul}), A B A B in one JVM, for the stories15M and stories110M shapes'
 * matrices at a batch of {@code n} rows. Prints the median multiply-adds per ns of the thread's CPU time of each and the
 * median per-round ratio. Run with the engine's test classpath:
 * <pre>
 * java --add-modules jdk.incubator.vector -cp kvtier-engine/target/classes:kvtier-engine/target/test-classes \
 *      io.kvtier.model.PackedMatmulComparison [n] [rounds]
 * </pre>
 */
public final class PackedMatmulComparison {

    private PackedMatmulComparison() {
    }

    public static void main(String[] args) {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 32;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 15;
        int[][] shapes = {{288, 864}, {768, 288}, {288, 32000}, {768, 2304}, {2048, 768}, {768, 32000}};
        VectorKernels k = VectorKernels.INSTANCE;
        // the thread's CPU time, not wall time: on a shared machine the thread is off its CPU much of the time
        ThreadMXBean cpu = ManagementFactory.getThreadMXBean();
        Random rnd = new Random(1);
        try (Arena arena = Arena.ofConfined()) {
            for (int[] shape : shapes) {
                int in = shape[0], out = shape[1];
                MemorySegment w = arena.allocate((long) in * out * Float.BYTES, 64);
                for (long i = 0; i < (long) in * out; i++) {
                    w.setAtIndex(ScalarKernels.F32, i, rnd.nextFloat() - 0.5f);
                }
                float[] x = new float[n * in];
                for (int i = 0; i < x.length; i++) {
                    x[i] = rnd.nextFloat() - 0.5f;
                }
                float[] y = new float[n * out];
                float[] packed = new float[k.packedLength(n, in)];
                double work = (double) in * out * n;
                long reps = Math.max(1, (long) (2e8 / work));
                double[] rowwise = new double[rounds], packedRate = new double[rounds], ratio = new double[rounds];
                for (int r = -3; r < rounds; r++) {   // 3 warm-up rounds
                    long t0 = cpu.getCurrentThreadCpuTime();
                    for (long i = 0; i < reps; i++) {
                        k.matmulRowwise(w, in, out, x, n, y, 0, out);
                    }
                    long t1 = cpu.getCurrentThreadCpuTime();
                    for (long i = 0; i < reps; i++) {
                        k.packRows(x, n, in, packed);
                        k.matmulPacked(w, in, out, packed, n, y, 0, out);
                    }
                    long t2 = cpu.getCurrentThreadCpuTime();
                    if (r >= 0) {
                        rowwise[r] = work * reps / (t1 - t0);
                        packedRate[r] = work * reps / (t2 - t1);
                        ratio[r] = packedRate[r] / rowwise[r];
                    }
                }
                System.out.printf(Locale.ROOT, "in %5d out %6d n %3d: rowwise %.2f, packed %.2f multiply-adds/ns, packed/rowwise median %.2f%n",
                        in, out, n, median(rowwise), median(packedRate), median(ratio));
            }
        }
    }

    private static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }
}

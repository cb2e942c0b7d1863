package io.kvtier.model.tensor;

import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import java.util.Random;

/**
 * Comparison (not a test; results in docs/design-notes.md): the decode kernels of Q4_0 (float32
 * activations) and Q8_0 (int8 activations) one row per call against four rows per pass
 * ({@link QuantDot#q4_0Rows4}, {@link Int8Dot#q8_0Rows4}) over the same rows, one thread, 0.2 s of
 * the thread's CPU time per variant per round, alternating; prints GB/s of weights per
 * CPU-second, the per-round ratio, and how many rows differ in any bit (must be 0). Args:
 * columns, KiB of rows, rounds:
 * <pre>
 * java --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED \
 *     -cp kvtier-engine/target/test-classes:kvtier-engine/target/classes \
 *     io.kvtier.model.tensor.Rows4KernelComparison 288 2048 5
 * </pre>
 */
public final class Rows4KernelComparison {

    private Rows4KernelComparison() {
    }

    public static void main(String[] args) {
        int cols = Integer.parseInt(args[0]);
        int kib = Integer.parseInt(args[1]);
        int rounds = Integer.parseInt(args[2]);
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        Random rnd = new Random(1);
        float[] x = new float[cols];
        for (int i = 0; i < cols; i++) x[i] = (float) rnd.nextGaussian();
        for (TensorType t : new TensorType[] {TensorType.Q4_0, TensorType.Q8_0}) {
            long rb = t.rowBytes(cols);
            int rows = (int) (kib * 1024L / rb) & ~3;
            MemorySegment data = Int8DotProbe.randomRows(t, cols, rows, rnd);
            Q8Activations xa = new Q8Activations();
            xa.quantize(x, 1, cols);
            float[] y = new float[rows], y4 = new float[rows];
            double[][] rate = new double[2][rounds];
            for (int round = -3; round < rounds; round++) {
                for (int v = 0; v < 2; v++) {
                    long calls = 0;
                    long t0 = mx.getCurrentThreadCpuTime();
                    long end = t0 + 200_000_000L;
                    long now;
                    do {
                        for (int rep = 0; rep < 8; rep++) {
                            if (t == TensorType.Q4_0) {
                                if (v == 0) for (int r = 0; r < rows; r++) y[r] = QuantDot.dot(t, data, r * rb, x, 0, cols);
                                else for (int r = 0; r < rows; r += 4) QuantDot.q4_0Rows4(data, r * rb, rb, x, 0, cols, y4, r);
                            } else {
                                if (v == 0) for (int r = 0; r < rows; r++) y[r] = Int8Dot.dot(t, data, r * rb, xa, 0, cols);
                                else for (int r = 0; r < rows; r += 4) Int8Dot.q8_0Rows4(data, r * rb, rb, xa.q, xa.d, 0, cols, y4, r);
                            }
                            calls++;
                        }
                        now = mx.getCurrentThreadCpuTime();
                    } while (now < end);
                    if (round >= 0) rate[v][round] = calls * (double) (rb * rows) / (now - t0);
                }
            }
            int diff = 0;
            for (int r = 0; r < rows; r++) if (Float.floatToRawIntBits(y[r]) != Float.floatToRawIntBits(y4[r])) diff++;
            double[] ratio = new double[rounds];
            for (int k = 0; k < rounds; k++) ratio[k] = rate[1][k] / rate[0][k];
            double[] a = rate[0].clone(), b = rate[1].clone();
            Arrays.sort(a); Arrays.sort(b); Arrays.sort(ratio);
            System.out.printf("%s cols=%d %dKiB single %.2f GB/s-cpu, rows4 %.2f; rows4/single median %.2f (%.2f-%.2f); rows differing in bits: %d of %d%n",
                    t, cols, kib, a[rounds / 2], b[rounds / 2], ratio[rounds / 2], ratio[0], ratio[rounds - 1], diff, rows);
        }
    }
}

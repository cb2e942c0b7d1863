package io.kvtier.model.tensor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Random;
import java.util.concurrent.CyclicBarrier;

/**
 * Probe (not a test): does a compute-bound kernel run as fast per CPU-second on each of two
 * threads running at once as on one thread alone? Each thread runs {@link QuantDot#dot} over its
 * own {@code kib} KiB of rows (cache-resident) for {@code seconds}; rounds alternate 1 and 2
 * threads. Prints bytes per ns of each thread's CPU time and of wall time (all threads summed).
 * Args: type cols kib seconds rounds; the classpath as {@link Int8DotProbe}'s, e.g.
 * {@code io.kvtier.model.tensor.ComputeScaling Q4_0 768 512 2 4}.
 */
public final class ComputeScaling {

    public static void main(String[] args) throws Exception {
        TensorType t = TensorType.valueOf(args[0]);
        int cols = Integer.parseInt(args[1]);
        int kib = Integer.parseInt(args[2]);
        double seconds = Double.parseDouble(args[3]);
        int rounds = Integer.parseInt(args[4]);
        MemorySegment[] data = new MemorySegment[2];
        long rowBytes = t.rowBytes(cols);
        int rows = (int) (kib * 1024L / rowBytes);
        Random rnd = new Random(3);
        for (int k = 0; k < 2; k++) {
            data[k] = Arena.global().allocate(rowBytes * rows, 64);
            byte[] row = new byte[(int) rowBytes];
            for (int r = 0; r < rows; r++) {
                rnd.nextBytes(row);
                MemorySegment.copy(MemorySegment.ofArray(row), 0, data[k], r * rowBytes, rowBytes);
                QuantKernelsTest.fixHalves(t, data[k], r * rowBytes, cols, rnd);
            }
        }
        float[] x = new float[cols];
        for (int i = 0; i < cols; i++) x[i] = (float) rnd.nextGaussian();
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        for (int round = -1; round < rounds; round++) {
            for (int threads = 1; threads <= 2; threads++) {
                double[] cpuRate = new double[threads];
                long[] bytes = new long[threads];
                CyclicBarrier start = new CyclicBarrier(threads);
                Thread[] ts = new Thread[threads];
                long w0 = System.nanoTime();
                for (int k = 0; k < threads; k++) {
                    int id = k;
                    ts[k] = new Thread(() -> {
                        try {
                            start.await();
                        } catch (Exception e) {
                            throw new IllegalStateException(e);
                        }
                        long c0 = mx.getCurrentThreadCpuTime();
                        long end = System.nanoTime() + (long) (seconds * 1e9);
                        float[] y = new float[rows];
                        long n = 0;
                        while (System.nanoTime() < end) {
                            for (int r = 0; r < rows; r++) y[r] = QuantDot.dot(t, data[id], r * rowBytes, x, 0, cols);
                            n += rowBytes * rows;
                        }
                        bytes[id] = n;
                        cpuRate[id] = n / (double) (mx.getCurrentThreadCpuTime() - c0);
                    });
                    ts[k].start();
                }
                for (Thread th : ts) th.join();
                long wall = System.nanoTime() - w0;
                long total = 0;
                for (long b : bytes) total += b;
                if (round >= 0) {
                    System.out.printf("%s %d thread(s): per CPU-second %s GB/s; wall %.2f GB/s%n", t, threads,
                            java.util.Arrays.toString(java.util.Arrays.stream(cpuRate).map(v -> Math.round(v * 100) / 100.0).toArray()),
                            total / (double) wall);
                }
            }
        }
    }
}

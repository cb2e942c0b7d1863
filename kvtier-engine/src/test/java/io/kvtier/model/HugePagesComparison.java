package io.kvtier.model;

import io.kvtier.memory.ReservedMemory;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * Benchmark (not a test): the F32 matrix-vector kernel and the bandwidth bound's read pass
 * ({@link VectorKernels#sumStreams}), each over memory of 4 KiB pages ({@link ReservedMemory#reserve})
 * and over transparent huge pages ({@link ReservedMemory#reserveHugePages}), on the calling thread,
 * in its CPU time, A B C D in one JVM. Each buffer holds a single-sequence decode step's weight
 * matrices of a model shape (per layer q, k, v, o, gate, up, down, then the classifier), random
 * floats, each variant its own copy. Prints each round's GB/s of CPU and the medians.
 *
 * <pre>
 * java --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED \
 *      -cp kvtier-core/target/classes:kvtier-engine/target/classes:kvtier-engine/target/test-classes \
 *      io.kvtier.model.HugePagesComparison [dim hidden layers vocab rounds]
 * </pre>
 * Defaults: the stories15M shape (288 768 6 32000), 7 rounds.
 */
public final class HugePagesComparison {

    private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    private static float sink;

    private HugePagesComparison() {
    }

    public static void main(String[] args) {
        int dim = args.length >= 4 ? Integer.parseInt(args[0]) : 288;
        int hidden = args.length >= 4 ? Integer.parseInt(args[1]) : 768;
        int layers = args.length >= 4 ? Integer.parseInt(args[2]) : 6;
        int vocab = args.length >= 4 ? Integer.parseInt(args[3]) : 32000;
        int rounds = args.length >= 5 ? Integer.parseInt(args[4]) : 7;
        int[][] shapes = new int[layers * 7 + 1][];   // (rows, in) in forward order
        for (int l = 0; l < layers; l++) {
            for (int i = 0; i < 4; i++) {
                shapes[l * 7 + i] = new int[] {dim, dim};
            }
            shapes[l * 7 + 4] = new int[] {hidden, dim};
            shapes[l * 7 + 5] = new int[] {hidden, dim};
            shapes[l * 7 + 6] = new int[] {dim, hidden};
        }
        shapes[layers * 7] = new int[] {vocab, dim};
        long[] offsets = new long[shapes.length];
        long bytes = 0;
        for (int i = 0; i < shapes.length; i++) {
            offsets[i] = bytes;
            bytes += (long) shapes[i][0] * shapes[i][1] * Float.BYTES;
        }
        try (Arena arena = Arena.ofShared()) {
            MemorySegment[] w = {ReservedMemory.reserve(arena, bytes), ReservedMemory.reserveHugePages(arena, bytes),
                    ReservedMemory.reserve(arena, bytes), ReservedMemory.reserveHugePages(arena, bytes)};
            SplittableRandom rnd = new SplittableRandom(7);
            for (MemorySegment m : w) {
                for (long i = 0; i < bytes / Float.BYTES; i++) {
                    m.setAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i, (float) (rnd.nextDouble() - 0.5));
                }
            }
            float[] x = new float[Math.max(dim, hidden)];
            for (int i = 0; i < x.length; i++) {
                x[i] = (float) (rnd.nextDouble() - 0.5);
            }
            float[] y = new float[Math.max(vocab, hidden)];
            long total = bytes;
            String[] names = {"kernel, 4 KiB pages", "kernel, huge pages", "read pass, 4 KiB pages", "read pass, huge pages"};
            Runnable[] runs = new Runnable[4];
            for (int v = 0; v < 2; v++) {
                MemorySegment weights = w[v];
                runs[v] = () -> {
                    for (int i = 0; i < shapes.length; i++) {
                        MemorySegment m = weights.asSlice(offsets[i], (long) shapes[i][0] * shapes[i][1] * Float.BYTES);
                        VectorKernels.INSTANCE.matvec(m, shapes[i][1], x, 0, y, 0, 0, shapes[i][0]);
                    }
                    sink += y[0];
                };
                MemorySegment read = w[v + 2];
                runs[v + 2] = () -> sink += VectorKernels.sumStreams(read, 0, total);
            }
            long warmEnd = System.nanoTime() + 3_000_000_000L;
            while (System.nanoTime() < warmEnd) {
                for (Runnable r : runs) {
                    r.run();
                }
            }
            int passes = Math.max(3, (int) (2_000_000_000L / bytes));   // ~2 GB a measurement
            double[][] gbs = new double[runs.length][rounds];
            for (int r = 0; r < rounds; r++) {
                StringBuilder line = new StringBuilder("round " + r + ":");
                for (int v = 0; v < runs.length; v++) {
                    long c0 = MX.getCurrentThreadCpuTime();
                    for (int i = 0; i < passes; i++) {
                        runs[v].run();
                    }
                    gbs[v][r] = bytes * (double) passes / (MX.getCurrentThreadCpuTime() - c0);
                    line.append(String.format(Locale.ROOT, " %.1f", gbs[v][r]));
                }
                System.out.println(line);
            }
            System.out.printf(Locale.ROOT, "%.1f MB, medians of %d rounds, GB/s of CPU:%n", bytes / 1e6, rounds);
            for (int v = 0; v < runs.length; v++) {
                double[] s = gbs[v].clone();
                Arrays.sort(s);
                System.out.printf(Locale.ROOT, "  %-24s %.1f%n", names[v], s[rounds / 2]);
            }
        }
    }
}

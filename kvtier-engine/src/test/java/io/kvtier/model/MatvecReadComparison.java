package io.kvtier.model;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import java.util.Locale;
import java.util.SplittableRandom;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Benchmark (not a test): the F32 matrix-vector kernel against the read pass of the bandwidth
 * bound ({@link VectorKernels#sumRows}) over the same bytes, on the calling thread, in its CPU
 * time, alternating in one JVM. The buffer holds the weight matrices of a single-sequence decode
 * step of a model shape in forward order (per layer q, k, v, o, gate, up, down; then the
 * classifier), random floats; a pass of the kernel multiplies each by a vector, a read pass sums
 * the same buffer as rows of {@code dim} floats. Prints per round the kernel's CPU time over the
 * read pass's, and the medians. Beside the kernel ({@code VectorKernels.matvec}, one call per
 * matrix): the same kernel called once per group of 4 rows (how it was called before the loop over
 * the groups moved into it), two other orders of the same product (8 rows with one vector each a
 * trip; one row at a time, in file order) and two other read passes (8 rows; one linear stream),
 * each also against the read pass measured just before it.
 *
 * <pre>
 * java --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED \
 *      -cp kvtier-engine/target/classes:kvtier-engine/target/test-classes io.kvtier.model.MatvecReadComparison \
 *      [dim hidden layers vocab] [rounds]
 * </pre>
 * Defaults: the stories15M shape (288 768 6 32000), 15 rounds.
 */
public final class MatvecReadComparison {

    private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    private static float sink;

    private MatvecReadComparison() {
    }

    public static void main(String[] args) {
        int dim = args.length >= 4 ? Integer.parseInt(args[0]) : 288;
        int hidden = args.length >= 4 ? Integer.parseInt(args[1]) : 768;
        int layers = args.length >= 4 ? Integer.parseInt(args[2]) : 6;
        int vocab = args.length >= 4 ? Integer.parseInt(args[3]) : 32000;
        int rounds = args.length == 1 ? Integer.parseInt(args[0]) : args.length >= 5 ? Integer.parseInt(args[4]) : 15;
        // (rows, cols) of each matrix in forward order
        int[][] shapes = new int[layers * 7 + 1][];
        for (int l = 0; l < layers; l++) {
            shapes[l * 7] = new int[] {dim, dim};
            shapes[l * 7 + 1] = new int[] {dim, dim};
            shapes[l * 7 + 2] = new int[] {dim, dim};
            shapes[l * 7 + 3] = new int[] {dim, dim};
            shapes[l * 7 + 4] = new int[] {hidden, dim};
            shapes[l * 7 + 5] = new int[] {hidden, dim};
            shapes[l * 7 + 6] = new int[] {dim, hidden};
        }
        shapes[layers * 7] = new int[] {vocab, dim};
        long bytes = 0;
        for (int[] s : shapes) {
            bytes += (long) s[0] * s[1] * Float.BYTES;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment w = arena.allocate(bytes, 64);
            SplittableRandom rnd = new SplittableRandom(7);
            for (long i = 0; i < bytes / 4; i++) {
                w.setAtIndex(java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED, i, (float) (rnd.nextDouble() - 0.5));
            }
            float[] x = new float[Math.max(dim, hidden)];
            for (int i = 0; i < x.length; i++) {
                x[i] = (float) (rnd.nextDouble() - 0.5);
            }
            float[] y = new float[Math.max(vocab, hidden)];
            long[] offsets = new long[shapes.length];
            long o = 0;
            for (int i = 0; i < shapes.length; i++) {
                offsets[i] = o;
                o += (long) shapes[i][0] * shapes[i][1] * Float.BYTES;
            }
            int readRows = (int) (bytes / ((long) dim * Float.BYTES));
            String[] names = {"VectorKernels.matvec", "matvec per 4 rows (before)", "rows8", "rows1x4 (file order)",
                    "read rows8", "read linear"};
            Mv[] mvs = {(m, in, xv, yv, rows) -> VectorKernels.INSTANCE.matvec(m, in, xv, 0, yv, 0, 0, rows),
                    MatvecReadComparison::matvecPerGroup, MatvecReadComparison::rows8, MatvecReadComparison::rows1x4};
            Runnable[] kernels = new Runnable[names.length];
            for (int v = 0; v < mvs.length; v++) {
                Mv mv = mvs[v];
                kernels[v] = () -> {
                    for (int i = 0; i < shapes.length; i++) {
                        MemorySegment m = w.asSlice(offsets[i], (long) shapes[i][0] * shapes[i][1] * Float.BYTES);
                        mv.run(m, shapes[i][1], x, y, shapes[i][0]);
                    }
                    sink += y[0];
                };
            }
            long total = bytes;
            kernels[mvs.length] = () -> sink += read8(w, dim, readRows);
            kernels[mvs.length + 1] = () -> sink += readLinear(w, total);
            Runnable read = () -> sink += VectorKernels.sumRows(w, (long) dim * Float.BYTES, dim, 0, readRows);
            long warmEnd = System.nanoTime() + 3_000_000_000L;
            while (System.nanoTime() < warmEnd) {
                for (Runnable kr : kernels) {
                    kr.run();
                }
                read.run();
            }
            int passes = Math.max(3, (int) (2_000_000_000L / bytes));   // ~ 2 GB a measurement
            double[][] ratio = new double[kernels.length][rounds];
            double[][] kernelGbs = new double[kernels.length][rounds];
            for (int r = 0; r < rounds; r++) {
                StringBuilder line = new StringBuilder("round " + r + ":");
                for (int v = 0; v < kernels.length; v++) {
                    long rd = cpu(read, passes);
                    long k = cpu(kernels[v], passes);
                    ratio[v][r] = rd / (double) k;
                    kernelGbs[v][r] = bytes * (double) passes / k;
                    line.append(String.format(Locale.ROOT, " %s %.3f", names[v], ratio[v][r]));
                }
                System.out.println(line);
            }
            System.out.printf(Locale.ROOT, "%.1f MB, medians of kernel/read (each against the read pass before it):%n", bytes / 1e6);
            for (int v = 0; v < kernels.length; v++) {
                System.out.printf(Locale.ROOT, "  %-24s %.3f  (%.2f GB/s of CPU)%n", names[v], median(ratio[v]), median(kernelGbs[v]));
            }
        }
    }

    static final VectorSpecies<Float> S = VectorKernels.S;
    static final int L = S.length();
    static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    interface Mv {
        void run(MemorySegment w, int in, float[] x, float[] y, int rows);
    }

    /** 8 rows, one vector a row per trip. */
    static void rows8(MemorySegment w, int in, float[] x, float[] y, int rows) {
        long rb = (long) in * 4;
        int r = 0;
        for (; r + 8 <= rows; r += 8) {
            long o0 = r * rb;
            FloatVector s0 = FloatVector.zero(S), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;
            for (int k = 0; k + L <= in; k += L) {
                FloatVector xv = FloatVector.fromArray(S, x, k);
                long kb = o0 + (long) k * 4;
                s0 = FloatVector.fromMemorySegment(S, w, kb, LE).fma(xv, s0);
                s1 = FloatVector.fromMemorySegment(S, w, kb + rb, LE).fma(xv, s1);
                s2 = FloatVector.fromMemorySegment(S, w, kb + 2 * rb, LE).fma(xv, s2);
                s3 = FloatVector.fromMemorySegment(S, w, kb + 3 * rb, LE).fma(xv, s3);
                s4 = FloatVector.fromMemorySegment(S, w, kb + 4 * rb, LE).fma(xv, s4);
                s5 = FloatVector.fromMemorySegment(S, w, kb + 5 * rb, LE).fma(xv, s5);
                s6 = FloatVector.fromMemorySegment(S, w, kb + 6 * rb, LE).fma(xv, s6);
                s7 = FloatVector.fromMemorySegment(S, w, kb + 7 * rb, LE).fma(xv, s7);
            }
            y[r] = s0.reduceLanes(VectorOperators.ADD);
            y[r + 1] = s1.reduceLanes(VectorOperators.ADD);
            y[r + 2] = s2.reduceLanes(VectorOperators.ADD);
            y[r + 3] = s3.reduceLanes(VectorOperators.ADD);
            y[r + 4] = s4.reduceLanes(VectorOperators.ADD);
            y[r + 5] = s5.reduceLanes(VectorOperators.ADD);
            y[r + 6] = s6.reduceLanes(VectorOperators.ADD);
            y[r + 7] = s7.reduceLanes(VectorOperators.ADD);
        }
    }

    /** The kernel called as before this change: once per group of 4 rows. */
    static void matvecPerGroup(MemorySegment w, int in, float[] x, float[] y, int rows) {
        for (int r = 0; r + 4 <= rows; r += 4) {
            VectorKernels.INSTANCE.matvec(w, in, x, 0, y, 0, r, r + 4);
        }
    }

    /** 1 row at a time (weights read in file order), four vectors per trip. */
    static void rows1x4(MemorySegment w, int in, float[] x, float[] y, int rows) {
        long rb = (long) in * 4;
        for (int r = 0; r < rows; r++) {
            long o0 = r * rb;
            FloatVector a0 = FloatVector.zero(S), a1 = a0, a2 = a0, a3 = a0;
            int k = 0;
            for (; k + 4 * L <= in; k += 4 * L) {
                long kb = o0 + (long) k * 4;
                a0 = FloatVector.fromMemorySegment(S, w, kb, LE).fma(FloatVector.fromArray(S, x, k), a0);
                a1 = FloatVector.fromMemorySegment(S, w, kb + 4 * L, LE).fma(FloatVector.fromArray(S, x, k + L), a1);
                a2 = FloatVector.fromMemorySegment(S, w, kb + 8 * L, LE).fma(FloatVector.fromArray(S, x, k + 2 * L), a2);
                a3 = FloatVector.fromMemorySegment(S, w, kb + 12 * L, LE).fma(FloatVector.fromArray(S, x, k + 3 * L), a3);
            }
            for (; k + L <= in; k += L) {
                a0 = FloatVector.fromMemorySegment(S, w, o0 + (long) k * 4, LE).fma(FloatVector.fromArray(S, x, k), a0);
            }
            y[r] = a0.add(a1).add(a2.add(a3)).reduceLanes(VectorOperators.ADD);
        }
    }

    /** Read pass: 8 rows, one vector a row per trip. */
    static float read8(MemorySegment w, int in, int rows) {
        long rb = (long) in * 4;
        FloatVector s0 = FloatVector.zero(S), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;
        for (int r = 0; r + 8 <= rows; r += 8) {
            long o0 = r * rb;
            for (int k = 0; k + L <= in; k += L) {
                long kb = o0 + (long) k * 4;
                s0 = FloatVector.fromMemorySegment(S, w, kb, LE).add(s0);
                s1 = FloatVector.fromMemorySegment(S, w, kb + rb, LE).add(s1);
                s2 = FloatVector.fromMemorySegment(S, w, kb + 2 * rb, LE).add(s2);
                s3 = FloatVector.fromMemorySegment(S, w, kb + 3 * rb, LE).add(s3);
                s4 = FloatVector.fromMemorySegment(S, w, kb + 4 * rb, LE).add(s4);
                s5 = FloatVector.fromMemorySegment(S, w, kb + 5 * rb, LE).add(s5);
                s6 = FloatVector.fromMemorySegment(S, w, kb + 6 * rb, LE).add(s6);
                s7 = FloatVector.fromMemorySegment(S, w, kb + 7 * rb, LE).add(s7);
            }
        }
        return s0.add(s1).add(s2.add(s3)).add(s4.add(s5).add(s6.add(s7))).reduceLanes(VectorOperators.ADD);
    }

    /** Read pass: one stream, eight vectors per trip. */
    static float readLinear(MemorySegment w, long bytes) {
        FloatVector a0 = FloatVector.zero(S), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
        long step = 8L * L * 4;
        for (long o = 0; o + step <= bytes; o += step) {
            a0 = FloatVector.fromMemorySegment(S, w, o, LE).add(a0);
            a1 = FloatVector.fromMemorySegment(S, w, o + 4 * L, LE).add(a1);
            a2 = FloatVector.fromMemorySegment(S, w, o + 8 * L, LE).add(a2);
            a3 = FloatVector.fromMemorySegment(S, w, o + 12 * L, LE).add(a3);
            b0 = FloatVector.fromMemorySegment(S, w, o + 16 * L, LE).add(b0);
            b1 = FloatVector.fromMemorySegment(S, w, o + 20 * L, LE).add(b1);
            b2 = FloatVector.fromMemorySegment(S, w, o + 24 * L, LE).add(b2);
            b3 = FloatVector.fromMemorySegment(S, w, o + 28 * L, LE).add(b3);
        }
        return a0.add(a1).add(a2.add(a3)).add(b0.add(b1).add(b2.add(b3))).reduceLanes(VectorOperators.ADD);
    }

    private static long cpu(Runnable r, int passes) {
        long c0 = MX.getCurrentThreadCpuTime();
        for (int i = 0; i < passes; i++) {
            r.run();
        }
        return MX.getCurrentThreadCpuTime() - c0;
    }

    private static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }
}

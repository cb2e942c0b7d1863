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
 * bound ({@link VectorKernels#sumStreams}) over the same bytes, on the calling thread, in its CPU
 * time, alternating in one JVM. The buffer holds the weight matrices of a single-sequence decode
 * step of a model shape in forward order (per layer q, k, v, o, gate, up, down; then the
 * classifier), random floats; a pass of the kernel multiplies each by a vector, a read pass sums
 * the same buffer. Prints per round each variant's CPU time over the read pass's (the one just
 * before it), and the medians. Beside the kernel ({@code VectorKernels.matvec}, one call per
 * matrix): two other orders of the same product (4 adjacent rows, the kernel before speed12; 8
 * adjacent rows with one vector each a trip) and other read patterns ({@link ReadPatterns}: 4
 * adjacent rows, the read pass before speed12; one linear stream; 2, 6 and 8 streams; 4 streams
 * with 8 vectors a trip). A ratio above 1 is faster than the read pass.
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
            String[] names = {"VectorKernels.matvec", "4 adjacent rows (before)", "rows8",
                    "read 4 adjacent rows (before)", "read linear", "read 2 streams", "read 4 streams x8",
                    "read 6 streams", "read 8 streams"};
            Mv[] mvs = {(m, in, xv, yv, rows) -> VectorKernels.INSTANCE.matvec(m, in, xv, 0, yv, 0, 0, rows),
                    MatvecReadComparison::adjacentRows4, MatvecReadComparison::rows8};
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
            long rowBytes = (long) dim * Float.BYTES;
            kernels[mvs.length] = () -> sink += ReadPatterns.adjacentRows4(w, rowBytes, dim, readRows);
            kernels[mvs.length + 1] = () -> sink += ReadPatterns.linear8(w, total);
            kernels[mvs.length + 2] = () -> sink += ReadPatterns.streams2x4(w, total);
            kernels[mvs.length + 3] = () -> sink += ReadPatterns.streams4x8(w, total);
            kernels[mvs.length + 4] = () -> sink += ReadPatterns.streams6x2(w, total);
            kernels[mvs.length + 5] = () -> sink += ReadPatterns.streams8x2(w, total);
            Runnable read = () -> sink += VectorKernels.sumStreams(w, 0, total);
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
            System.out.printf(Locale.ROOT, "%.1f MB, medians of read pass / variant, CPU time (each against the read pass before it; above 1: faster):%n", bytes / 1e6);
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

    /** The kernel before speed12: 4 adjacent rows at a time, two vectors a row per trip (no row tails). */
    static void adjacentRows4(MemorySegment w, int in, float[] x, float[] y, int rows) {
        long rb = (long) in * 4;
        for (int r = 0; r + 4 <= rows; r += 4) {
            long o0 = r * rb, o1 = o0 + rb, o2 = o1 + rb, o3 = o2 + rb;
            FloatVector s0 = FloatVector.zero(S), s1 = s0, s2 = s0, s3 = s0, t0 = s0, t1 = s0, t2 = s0, t3 = s0;
            int k = 0;
            for (; k + 2 * L <= in; k += 2 * L) {
                FloatVector xv = FloatVector.fromArray(S, x, k);
                FloatVector xw = FloatVector.fromArray(S, x, k + L);
                long kb = (long) k * 4, kc = kb + L * 4L;
                s0 = FloatVector.fromMemorySegment(S, w, o0 + kb, LE).fma(xv, s0);
                s1 = FloatVector.fromMemorySegment(S, w, o1 + kb, LE).fma(xv, s1);
                s2 = FloatVector.fromMemorySegment(S, w, o2 + kb, LE).fma(xv, s2);
                s3 = FloatVector.fromMemorySegment(S, w, o3 + kb, LE).fma(xv, s3);
                t0 = FloatVector.fromMemorySegment(S, w, o0 + kc, LE).fma(xw, t0);
                t1 = FloatVector.fromMemorySegment(S, w, o1 + kc, LE).fma(xw, t1);
                t2 = FloatVector.fromMemorySegment(S, w, o2 + kc, LE).fma(xw, t2);
                t3 = FloatVector.fromMemorySegment(S, w, o3 + kc, LE).fma(xw, t3);
            }
            if (k + L <= in) {
                FloatVector xv = FloatVector.fromArray(S, x, k);
                long kb = (long) k * 4;
                s0 = FloatVector.fromMemorySegment(S, w, o0 + kb, LE).fma(xv, s0);
                s1 = FloatVector.fromMemorySegment(S, w, o1 + kb, LE).fma(xv, s1);
                s2 = FloatVector.fromMemorySegment(S, w, o2 + kb, LE).fma(xv, s2);
                s3 = FloatVector.fromMemorySegment(S, w, o3 + kb, LE).fma(xv, s3);
            }
            y[r] = s0.add(t0).reduceLanes(VectorOperators.ADD);
            y[r + 1] = s1.add(t1).reduceLanes(VectorOperators.ADD);
            y[r + 2] = s2.add(t2).reduceLanes(VectorOperators.ADD);
            y[r + 3] = s3.add(t3).reduceLanes(VectorOperators.ADD);
        }
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

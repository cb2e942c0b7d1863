package io.kvtier.model.tensor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import java.util.Locale;
import java.util.Random;

/**
 * Comparison (not a test): single-sequence int8 decode kernels over one matrix, one thread,
 * variants alternating in one JVM, each 0.25 s of the thread's CPU time per round; prints GB/s
 * of weights per CPU-second (median) and each variant's per-round ratio to the first (median,
 * range), how many outputs differ in their bits from the first variant's and by how much at
 * most. Args: {@code q4|q8}, rows, cols, rounds, variants: {@code cur} (the engine's decode
 * kernel: {@link Interleaved}), {@code old} (main's Q4_0 kernel before quant11), {@code dec} /
 * {@code olddec} (the Q4_0 float tile decode, now and before), {@code row} (Q8_0: the row kernel
 * {@link Int8Dot} on the file's layout, the engine's before the nineteenth session), {@code short},
 * {@code short2}, {@code rows4} (Q8_0 row-kernel candidates). Run with {@code -Xbatch} so that
 * every variant is compiled by C2 before the rounds that count:
 * <pre>
 * java --add-modules jdk.incubator.vector -Xbatch -cp kvtier-engine/target/classes:kvtier-engine/target/test-classes \
 *      io.kvtier.model.tensor.Int8ProductComparison q4 1536 768 7 old cur
 * </pre>
 */
public final class Int8ProductComparison {

    private Int8ProductComparison() {
    }

    public static void main(String[] args) {
        boolean q4 = args[0].equals("q4");
        int rows = Integer.parseInt(args[1]);
        int cols = Integer.parseInt(args[2]);
        int rounds = Integer.parseInt(args[3]);
        String[] names = Arrays.copyOfRange(args, 4, args.length);
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        Random rnd = new Random(11);
        TensorType t = q4 ? TensorType.Q4_0 : TensorType.Q8_0;
        long rowBytes = t.rowBytes(cols);
        MemorySegment w = Int8DotProbe.randomRows(t, cols, rows, rnd);
        MemorySegment rowMajor = Arena.global().allocate(w.byteSize(), 64).copyFrom(w);
        Interleaved.repackInPlace(t, w, rows, cols);
        float[] x = new float[cols];
        for (int i = 0; i < cols; i++) x[i] = (float) rnd.nextGaussian();
        Q8Activations xa = new Q8Activations();
        xa.quantize(x, 1, cols);
        int[] sums = Int8Candidates.blockSums(xa, cols);
        float[] y = new float[rows];
        float[][] out = new float[names.length][];
        float[] tile = new float[cols * Interleaved.GROUP];
        Runnable[] run = new Runnable[names.length];
        for (int v = 0; v < names.length; v++) {
            run[v] = switch (names[v]) {
                case "cur" -> () -> Interleaved.matmul(t, w, rows, cols, xa, 1, y, 0, rows);
                case "row" -> () -> {
                    for (int r = 0; r < rows; r++) y[r] = Int8Dot.dot(t, rowMajor, r * rowBytes, xa, 0, cols);
                };
                case "old" -> () -> Int8Candidates.oldMatmul(w, rows, cols, xa, sums, y);
                case "olddec" -> () -> {
                    for (int g = 0; g < rows / Interleaved.GROUP; g++) {
                        Int8Candidates.oldDecodeGroup(w, (long) g * (cols / 32) * Q4Interleaved.BLOCK_BYTES, cols / 32, tile, 0);
                    }
                    y[0] = tile[1];
                };
                case "dec" -> () -> {
                    for (int g = 0; g < rows / Interleaved.GROUP; g++) {
                        Q4Interleaved.decodeGroup(w, (long) g * (cols / 32) * Q4Interleaved.BLOCK_BYTES, cols / 32, tile, 0);
                    }
                    y[0] = tile[1];
                };
                case "short" -> () -> {
                    for (int r = 0; r < rows; r++) y[r] = Int8Candidates.q8Short(rowMajor, r * rowBytes, xa.q, xa.d, 0, cols);
                };
                case "short2" -> () -> {
                    for (int r = 0; r < rows; r += 2) Int8Candidates.q8Short2(rowMajor, r * rowBytes, rowBytes, xa.q, xa.d, 0, cols, y, r);
                };
                case "rows4" -> () -> {
                    for (int r = 0; r < rows; r += 4) Int8Dot.q8_0Rows4(rowMajor, r * rowBytes, rowBytes, xa.q, xa.d, 0, cols, y, r);
                };
                default -> throw new IllegalArgumentException(names[v]);
            };
        }
        double[][] rate = new double[names.length][rounds];
        for (int round = -6; round < rounds; round++) {
            for (int v = 0; v < names.length; v++) {
                long t0 = mx.getCurrentThreadCpuTime();
                long calls = 0;
                do {
                    run[v].run();
                    calls++;
                } while (mx.getCurrentThreadCpuTime() - t0 < 250_000_000L);
                if (round >= 0) {
                    rate[v][round] = calls * (double) rowBytes * rows / (mx.getCurrentThreadCpuTime() - t0);
                }
                if (round == -1) {
                    out[v] = y.clone();
                }
            }
        }
        System.out.printf(Locale.ROOT, "%s %d x %d (%.1f MB), lanes %d%n", t, rows, cols, rows * rowBytes / 1e6, QuantSpecies.L);
        for (int v = 0; v < names.length; v++) {
            double[] ratio = new double[rounds];
            for (int i = 0; i < rounds; i++) ratio[i] = rate[v][i] / rate[0][i];
            int diff = 0;
            double maxDiff = 0, sq = 0;
            for (int r = 0; r < rows; r++) {
                diff += Float.floatToRawIntBits(out[v][r]) != Float.floatToRawIntBits(out[0][r]) ? 1 : 0;
                maxDiff = Math.max(maxDiff, Math.abs(out[v][r] - out[0][r]));
                sq += out[0][r] * (double) out[0][r];
            }
            System.out.printf(Locale.ROOT, "  %-8s largest difference from %s: %.2e of the outputs' RMS%n", names[v], names[0], maxDiff / Math.sqrt(sq / rows));
            System.out.printf(Locale.ROOT, "  %-8s %6.2f GB/s per CPU-s, / %s median %.3f (%.3f-%.3f), outputs differing from %s: %d%n",
                    names[v], median(rate[v]), names[0], median(ratio), Arrays.stream(ratio).min().orElse(0),
                    Arrays.stream(ratio).max().orElse(0), names[0], diff);
        }
    }

    private static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }
}

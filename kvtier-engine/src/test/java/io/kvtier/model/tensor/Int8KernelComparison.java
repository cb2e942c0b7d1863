package io.kvtier.model.tensor;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Random;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Comparison (not a test; results in docs/design-notes.md): the decode kernels of Q8_0 and Q4_0
 * rows with float32 activations ({@link QuantDot}) against the same rows with activations
 * quantized to Q8_0 ({@link Int8Dot}, the quantization included in its time, once per pass over
 * the rows as in a forward pass) and, for Q8_0, {@link Int8DotProbe}'s auto-vectorized
 * {@code vpmaddwd} loop. One thread; each variant runs 0.3 s of the thread's CPU time per
 * round, alternating; prints GB/s of weights per CPU-second (median, min, max) and the ratio to
 * the float kernel per round. Args: columns, KiB of rows, rounds. Classpath as {@link Int8DotProbe}'s:
 * <pre>
 * java --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED \
 *     -cp kvtier-engine/target/test-classes:kvtier-engine/target/classes \
 *     io.kvtier.model.tensor.Int8KernelComparison 768 1024 7
 * </pre>
 */
public final class Int8KernelComparison {

    public static void main(String[] args) {
        int cols = Integer.parseInt(args[0]);
        int kib = Integer.parseInt(args[1]);
        int rounds = Integer.parseInt(args[2]);
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        Random rnd = new Random(1);
        float[] x = new float[cols];
        for (int i = 0; i < cols; i++) x[i] = (float) rnd.nextGaussian();
        System.out.printf("lanes %d%n", QuantDot.lanes());
        for (TensorType t : new TensorType[] {TensorType.Q8_0, TensorType.Q4_0}) {
            long rowBytes = t.rowBytes(cols);
            int rows = (int) (kib * 1024L / rowBytes);
            MemorySegment data = Int8DotProbe.randomRows(t, cols, rows, rnd);
            Q8Activations xa = new Q8Activations();
            short[] xq = new short[cols];
            float[] xd = new float[cols / 32];
            short[] ws = new short[cols];
            int[] prod = new int[cols / 2];
            float[] y = new float[rows];
            String[] names = {"float", "int8", "madd"};
            int variants = t == TensorType.Q8_0 ? 3 : 2;
            double[][] rate = new double[variants][rounds];
            for (int round = -3; round < rounds; round++) {
                for (int v = 0; v < variants; v++) {
                    long calls = 0;
                    long t0 = mx.getCurrentThreadCpuTime();
                    long end = t0 + 300_000_000L;
                    long now;
                    do {
                        for (int rep = 0; rep < 8; rep++) {
                            if (v == 0) {
                                for (int r = 0; r < rows; r++) y[r] = QuantDot.dot(t, data, r * rowBytes, x, 0, cols);
                            } else if (v == 1) {
                                xa.quantize(x, 1, cols);
                                if (t == TensorType.Q8_0) {
                                    for (int r = 0; r < rows; r++) y[r] = Int8Dot.dot(t, data, r * rowBytes, xa, 0, cols);
                                } else {
                                    short[] c = offsets(xa, cols);
                                    for (int r = 0; r < rows; r++) y[r] = q4_0(data, r * rowBytes, xa.q, c, xa.d, 0, cols);
                                }
                            } else {
                                Int8DotProbe.quantize(x, cols, xq, xd);
                                for (int r = 0; r < rows; r++) {
                                    y[r] = Int8DotProbe.q8Madd(data, r * rowBytes, xq, xd, cols, ws, prod);
                                }
                            }
                            calls++;
                        }
                        now = mx.getCurrentThreadCpuTime();
                    } while (now < end);
                    if (round >= 0) rate[v][round] = calls * (double) (rowBytes * rows) / (now - t0);
                }
            }
            for (int v = 0; v < variants; v++) {
                double[] s = rate[v].clone();
                Arrays.sort(s);
                double[] ratio = new double[rounds];
                for (int k = 0; k < rounds; k++) ratio[k] = rate[v][k] / rate[0][k];
                Arrays.sort(ratio);
                System.out.printf("%s cols=%d %dKiB %-5s median %.2f GB/s of CPU (min %.2f max %.2f); / float median %.2f (%.2f-%.2f)%n",
                        t, cols, kib, names[v], s[rounds / 2], s[0], s[rounds - 1], ratio[rounds / 2], ratio[0], ratio[rounds - 1]);
            }
        }
    }

    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    private static final ValueLayout.OfShort I16 =
            ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(LE);
    private static final VectorSpecies<Float> F = QuantSpecies.F;
    private static final VectorSpecies<Byte> B = QuantSpecies.B;
    private static final VectorSpecies<Short> S = QuantSpecies.S;
    private static final VectorSpecies<Integer> I = QuantSpecies.I;
    private static final int L = QuantSpecies.L;

    /**
     * The Q4_0 kernel that lost (0.76x the float kernel): Q4_0's {@code -8} folded into the
     * activations, {@code c[16b + j] = -8 * (q[32b + j] + q[32b + 16 + j])}, so that raw nibbles
     * are multiplied ({@code |lo * x + hi * x' + c| <= 5842} fits a short).
     */
    static short[] offsets(Q8Activations x, int n) {
        short[] c = new short[n / 2];
        for (int b = 0; b < n / 32; b++) {
            for (int j = 0; j < 16; j++) {
                c[16 * b + j] = (short) (-8 * (x.quant(0, 32 * b + j) + x.quant(0, 32 * b + 16 + j)));
            }
        }
        return c;
    }

    /**
     * Q4_0: byte j of a block holds the nibbles of values j and 16+j; zero-extended to shorts, the
     * low nibble is a mask and the high one a shift; {@code lo * x_j + hi * x_(16+j) + c_j} (the
     * {@code -8} folded into {@code c}) is exact in a short, widened to ints once per block.
     */
    static float q4_0(MemorySegment w, long off, short[] xq, short[] xc, float[] xd, int xo, int n) {
        FloatVector acc0 = FloatVector.zero(F), acc1 = acc0;
        for (int b = 0; b < n / 32; b++) {
            long p = off + 18L * b;
            int xi = xo + 32 * b;
            int ci = xi >> 1;
            IntVector s = nibbleSums(w, p + 2, xq, xc, xi, ci);
            for (int j = L; j < 16; j += L) {   // no trips at 16 lanes
                s = s.add(nibbleSums(w, p + 2 + j, xq, xc, xi + j, ci + j));
            }
            FloatVector next = ((FloatVector) s.convert(VectorOperators.I2F, 0))
                    .fma(FloatVector.broadcast(F, Float.float16ToFloat(w.get(I16, p)) * xd[xi >> 5]), acc1);
            acc1 = acc0;
            acc0 = next;
        }
        return acc0.add(acc1).reduceLanes(VectorOperators.ADD);
    }

    /** {@code L} bytes of nibbles at {@code at}: {@code L} ints {@code (lo-8) x_j + (hi-8) x_(16+j)}. */
    private static IntVector nibbleSums(MemorySegment w, long at, short[] xq, short[] xc, int xi, int ci) {
        ShortVector v = (ShortVector) ByteVector.fromMemorySegment(B, w, at, LE)
                .convertShape(VectorOperators.ZERO_EXTEND_B2S, S, 0);
        ShortVector t = v.and((short) 0xF).mul(ShortVector.fromArray(S, xq, xi))
                .add(v.lanewise(VectorOperators.LSHR, 4).mul(ShortVector.fromArray(S, xq, xi + 16)))
                .add(ShortVector.fromArray(S, xc, ci));
        return (IntVector) t.convertShape(VectorOperators.S2I, I, 0);
    }
}

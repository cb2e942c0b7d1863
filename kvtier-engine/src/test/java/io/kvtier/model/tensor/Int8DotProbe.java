package io.kvtier.model.tensor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteOrder;
import java.util.Random;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;

/**
 * Probe (not a test; results in docs/design-notes.md): Q4_0 and Q8_0 rows against activations
 * quantized to int8 (in shorts, one fp16-rounded scale per 32 values, as llama.cpp's Q8_0
 * activations), the integer products through C2's auto-vectorized short multiply-add loop
 * ({@link #madd}, compiled to 512-bit {@code vpmaddwd}) or through {@code ShortVector.mul}, against
 * {@link QuantDot}'s float kernels over the same rows. Each variant runs for 0.3 s of the thread's
 * CPU time per round, alternating; prints GB/s of weights per CPU-second (median, min, max) and
 * the largest difference from the float kernel. Args: columns, KiB of rows, rounds.
 * <pre>
 * mvn -B -q -pl kvtier-engine -am test-compile dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile=/tmp/cp.txt
 * java --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED \
 *     -cp kvtier-engine/target/test-classes:kvtier-engine/target/classes:$(cat /tmp/cp.txt) \
 *     io.kvtier.model.tensor.Int8DotProbe 768 1024 5
 * </pre>
 */
public final class Int8DotProbe {
    static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(LE);

    static void quantize(float[] x, int n, short[] xq, float[] xd) {
        for (int b = 0; b < n / 32; b++) {
            float amax = 0;
            for (int j = 0; j < 32; j++) amax = Math.max(amax, Math.abs(x[32 * b + j]));
            float id = amax != 0 ? 127f / amax : 0f;
            xd[b] = Float.float16ToFloat(Float.floatToFloat16(amax / 127f));
            for (int j = 0; j < 32; j++) xq[32 * b + j] = (short) Math.rint(x[32 * b + j] * id);
        }
    }

    /** Q4_0 row: unpack to shorts (Vector API), madd loop (auto-vectorized), per-block scale (Vector API). */
    static float q4Madd(MemorySegment w, long off, short[] xq, float[] xd, int n, short[] ws, int[] prod) {
        int blocks = n / 32;
        for (int b = 0; b < blocks; b++) {
            ByteVector q = ByteVector.fromMemorySegment(ByteVector.SPECIES_128, w, off + 18L * b + 2, LE);
            ((ShortVector) q.and((byte) 0xF).sub((byte) 8).convertShape(VectorOperators.B2S, ShortVector.SPECIES_256, 0)).intoArray(ws, 32 * b);
            ((ShortVector) q.lanewise(VectorOperators.LSHR, 4).sub((byte) 8).convertShape(VectorOperators.B2S, ShortVector.SPECIES_256, 0)).intoArray(ws, 32 * b + 16);
        }
        madd(ws, xq, prod, n / 2);
        return scaled(prod, w, off, 18, xd, blocks);
    }

    /** {@code sum_b d_w(b) * d_x(b) * sum(prod[16b..16b+15])}: one convert and FMA per block of {@code blockBytes}. */
    static float scaled(int[] prod, MemorySegment w, long off, int blockBytes, float[] xd, int blocks) {
        FloatVector acc0 = FloatVector.zero(FloatVector.SPECIES_512), acc1 = acc0;
        for (int b = 0; b < blocks; b++) {
            FloatVector p = (FloatVector) IntVector.fromArray(IntVector.SPECIES_512, prod, 16 * b).convert(VectorOperators.I2F, 0);
            float d = Float.float16ToFloat(w.get(I16, off + (long) blockBytes * b)) * xd[b];
            FloatVector next = p.fma(FloatVector.broadcast(FloatVector.SPECIES_512, d), acc1);
            acc1 = acc0;
            acc0 = next;
        }
        return acc0.add(acc1).reduceLanes(VectorOperators.ADD);
    }

    static void madd(short[] a, short[] b, int[] out, int pairs) {
        for (int j = 0; j < pairs; j++) {
            out[j] = a[2 * j] * b[2 * j] + a[2 * j + 1] * b[2 * j + 1];
        }
    }

    /** Q4_0 row, Vector API only: short products summed in shorts (|q*x| <= 1016, 2 terms per lane), widened per block. */
    static float q4Short(MemorySegment w, long off, short[] xq, float[] xd, int n) {
        int blocks = n / 32;
        FloatVector acc0 = FloatVector.zero(FloatVector.SPECIES_512), acc1 = acc0;
        for (int b = 0; b < blocks; b++) {
            ByteVector q = ByteVector.fromMemorySegment(ByteVector.SPECIES_128, w, off + 18L * b + 2, LE);
            ShortVector lo = (ShortVector) q.and((byte) 0xF).sub((byte) 8).convertShape(VectorOperators.B2S, ShortVector.SPECIES_256, 0);
            ShortVector hi = (ShortVector) q.lanewise(VectorOperators.LSHR, 4).sub((byte) 8).convertShape(VectorOperators.B2S, ShortVector.SPECIES_256, 0);
            ShortVector s = lo.mul(ShortVector.fromArray(ShortVector.SPECIES_256, xq, 32 * b))
                    .add(hi.mul(ShortVector.fromArray(ShortVector.SPECIES_256, xq, 32 * b + 16)));
            FloatVector p = (FloatVector) s.convertShape(VectorOperators.S2I, IntVector.SPECIES_512, 0).convert(VectorOperators.I2F, 0);
            FloatVector next = p.fma(FloatVector.broadcast(FloatVector.SPECIES_512, Float.float16ToFloat(w.get(I16, off + 18L * b)) * xd[b]), acc1);
            acc1 = acc0;
            acc0 = next;
        }
        return acc0.add(acc1).reduceLanes(VectorOperators.ADD);
    }

    /** Activations of {@link #q4Pairs}: per pair of blocks, the 32 values under low nibbles (16 of each block), then the 32 under high nibbles. */
    static void arrange(short[] xq, int n, short[] xa) {
        for (int b = 0; b + 1 < n / 32; b += 2) {
            int o = 32 * b;
            for (int j = 0; j < 16; j++) {
                xa[o + j] = xq[o + j];
                xa[o + 16 + j] = xq[o + 32 + j];
                xa[o + 32 + j] = xq[o + 16 + j];
                xa[o + 48 + j] = xq[o + 48 + j];
            }
        }
    }

    /** Q4_0 row, two blocks per iteration in 512-bit short vectors. */
    static float q4Pairs(MemorySegment w, long off, short[] xa, float[] xd, int n) {
        int blocks = n / 32;
        FloatVector acc0 = FloatVector.zero(FloatVector.SPECIES_512), acc1 = acc0;
        for (int b = 0; b + 1 < blocks; b += 2) {
            long p = off + 18L * b;
            // both blocks' bytes in one 256-bit vector: block b in lanes 0-15, block b+1 in 16-31
            ByteVector qr = ByteVector.fromMemorySegment(ByteVector.SPECIES_256, w, p + 2, LE).blend(
                    ByteVector.fromMemorySegment(ByteVector.SPECIES_256, w, p + 4, LE), HI16);
            ShortVector lo = (ShortVector) qr.and((byte) 0xF).sub((byte) 8).convertShape(VectorOperators.B2S, ShortVector.SPECIES_512, 0);
            ShortVector hi = (ShortVector) qr.lanewise(VectorOperators.LSHR, 4).sub((byte) 8).convertShape(VectorOperators.B2S, ShortVector.SPECIES_512, 0);
            ShortVector s = lo.mul(ShortVector.fromArray(ShortVector.SPECIES_512, xa, 32 * b))
                    .add(hi.mul(ShortVector.fromArray(ShortVector.SPECIES_512, xa, 32 * b + 32)));
            FloatVector s0 = (FloatVector) s.convertShape(VectorOperators.S2I, IntVector.SPECIES_512, 0).convert(VectorOperators.I2F, 0);
            FloatVector s1 = (FloatVector) s.convertShape(VectorOperators.S2I, IntVector.SPECIES_512, 1).convert(VectorOperators.I2F, 0);
            acc0 = s0.fma(FloatVector.broadcast(FloatVector.SPECIES_512, Float.float16ToFloat(w.get(I16, p)) * xd[b]), acc0);
            acc1 = s1.fma(FloatVector.broadcast(FloatVector.SPECIES_512, Float.float16ToFloat(w.get(I16, p + 18)) * xd[b + 1]), acc1);
        }
        return acc0.add(acc1).reduceLanes(VectorOperators.ADD);
    }

    static final jdk.incubator.vector.VectorMask<Byte> HI16 = ByteVector.SPECIES_256.indexInRange(-16, 16);

    /** Q8_0 row: unpack to shorts, madd loop, scale. */
    static float q8Madd(MemorySegment w, long off, short[] xq, float[] xd, int n, short[] ws, int[] prod) {
        int blocks = n / 32;
        for (int b = 0; b < blocks; b++) {
            ByteVector q = ByteVector.fromMemorySegment(ByteVector.SPECIES_256, w, off + 34L * b + 2, LE);
            ((ShortVector) q.convertShape(VectorOperators.B2S, ShortVector.SPECIES_512, 0)).intoArray(ws, 32 * b);
        }
        madd(ws, xq, prod, n / 2);
        return scaled(prod, w, off, 34, xd, blocks);
    }

    /** {@code rows} random rows of {@code cols} values of type {@code t}, with finite half scales. */
    static MemorySegment randomRows(TensorType t, int cols, int rows, Random rnd) {
        long rowBytes = t.rowBytes(cols);
        MemorySegment data = Arena.global().allocate(rowBytes * rows, 64);
        byte[] row = new byte[(int) rowBytes];
        for (int r = 0; r < rows; r++) {
            rnd.nextBytes(row);
            MemorySegment.copy(MemorySegment.ofArray(row), 0, data, r * rowBytes, rowBytes);
            QuantKernelsTest.fixHalves(t, data, r * rowBytes, cols, rnd);
        }
        return data;
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
            long rowBytes = t.rowBytes(cols);
            int rows = (int) (kib * 1024L / rowBytes);
            MemorySegment data = randomRows(t, cols, rows, rnd);
            short[] xq = new short[cols];
            float[] xd = new float[cols / 32];
            short[] ws = new short[cols];
            int[] prod = new int[cols / 2];
            float[] y = new float[rows];
            String[] names = {"float", "madd", "short", "pairs"};
            short[] xa = new short[cols];
            double[][] rate = new double[4][rounds];
            double err = 0, refMax = 0;
            for (int round = -3; round < rounds; round++) {
                for (int v = 0; v < 4; v++) {
                    if (t == TensorType.Q8_0 && v >= 2) continue;
                    long calls = 0;
                    long t0 = mx.getCurrentThreadCpuTime();
                    long end = t0 + 300_000_000L;
                    long now;
                    do {
                        for (int rep = 0; rep < 8; rep++) {
                            if (v == 0) {
                                for (int r = 0; r < rows; r++) y[r] = QuantDot.dot(t, data, r * rowBytes, x, 0, cols);
                            } else {
                                quantize(x, cols, xq, xd);
                                arrange(xq, cols, xa);
                                for (int r = 0; r < rows; r++) {
                                    float s = v == 3 ? q4Pairs(data, r * rowBytes, xa, xd, cols) : v == 1
                                            ? (t == TensorType.Q4_0 ? q4Madd(data, r * rowBytes, xq, xd, cols, ws, prod) : q8Madd(data, r * rowBytes, xq, xd, cols, ws, prod))
                                            : q4Short(data, r * rowBytes, xq, xd, cols);
                                    if (round == -3 && rep == 0) {
                                        float ref = QuantDot.dot(t, data, r * rowBytes, x, 0, cols);
                                        err = Math.max(err, Math.abs(s - ref)); refMax = Math.max(refMax, Math.abs(ref));
                                    }
                                    y[r] = s;
                                }
                            }
                            calls++;
                        }
                        now = mx.getCurrentThreadCpuTime();
                    } while (now < end);
                    if (round >= 0) rate[v][round] = calls * (double) (rowBytes * rows) / (now - t0);
                }
            }
            for (int v = 0; v < 4; v++) {
                if (t == TensorType.Q8_0 && v >= 2) continue;
                double[] s = rate[v].clone();
                java.util.Arrays.sort(s);
                System.out.printf("%s cols=%d %dKiB %-6s median %.2f GB/s of CPU (min %.2f max %.2f)%n", t, cols, kib, names[v], s[s.length / 2], s[0], s[s.length - 1]);
            }
            System.out.printf("%s max |int8 - float| %.4f of max |y| %.4f%n", t, err, refMax);
        }
    }
}

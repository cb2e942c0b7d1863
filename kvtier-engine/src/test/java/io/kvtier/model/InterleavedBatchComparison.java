package io.kvtier.model;

import io.kvtier.model.tensor.Q4Interleaved;
import io.kvtier.model.tensor.QuantMatmul;
import io.kvtier.model.tensor.ScalarQuant;
import io.kvtier.model.tensor.TensorType;
import io.kvtier.model.tensor.Weight;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Locale;
import java.util.Random;

/**
 * Benchmark (not a test): the batched float32-activation product (prefill chunks, 32-sequence
 * decode) on a Q4_0 matrix in its file layout, by the route it took before repacking
 * ({@link PackedMatmul} from a vector of rows, {@link QuantMatmul}'s 4 x 4 tiles below), against
 * the same matrix repacked by {@link Q4Interleaved} through {@link QuantMatmul#matmul} (its
 * group tiles), on the 15M and 110M shapes, one thread, alternating, in the thread's CPU time.
 * Prints multiply-adds per ns of CPU (median of the rounds) and the median per-round ratio
 * interleaved / file layout. Args: batch rows, rounds.
 * <pre>
 * java --add-modules jdk.incubator.vector -cp kvtier-engine/target/classes:kvtier-engine/target/test-classes \
 *      io.kvtier.model.InterleavedBatchComparison 32 5
 * </pre>
 */
public final class InterleavedBatchComparison {

    private static final int[][] SHAPES = {{288, 864}, {768, 288}, {768, 2304}, {768, 4096}, {2048, 768}, {768, 32000}};

    private InterleavedBatchComparison() {
    }

    public static void main(String[] args) {
        int n = Integer.parseInt(args[0]);
        int rounds = Integer.parseInt(args[1]);
        ThreadMXBean cpu = ManagementFactory.getThreadMXBean();
        Random r = new Random(5);
        for (int[] shape : SHAPES) {
            int in = shape[0], out = shape[1];
            float[] values = new float[out * in];
            for (int i = 0; i < values.length; i++) values[i] = (float) r.nextGaussian();
            ByteBuffer buf = ByteBuffer.allocate((int) TensorType.Q4_0.rowBytes(in) * out).order(ByteOrder.LITTLE_ENDIAN);
            ScalarQuant.encode(TensorType.Q4_0, values, 0, out * in, buf);
            // off-heap, as a model file's mapping: the kernels' short loads from a heap byte[] segment ran 7x slower
            Weight rowMajor = new Weight(TensorType.Q4_0, offHeap(buf.array()), out, in);
            MemorySegment copy = offHeap(buf.array());
            Q4Interleaved.repackInPlace(copy, out, in);
            Weight interleaved = new Weight(TensorType.Q4_0, copy, out, in, true);
            float[] x = new float[n * in];
            for (int i = 0; i < x.length; i++) x[i] = (float) r.nextGaussian();
            float[] y = new float[n * out];
            float[] packed = new float[PackedMatmul.packedLength(n, in)];
            double[][] rate = new double[2][rounds];
            for (int round = -3; round < rounds; round++) {   // 3 warm-up rounds: the first calls run the Vector API uncompiled
                for (int v = 0; v < 2; v++) {
                    long t0 = cpu.getCurrentThreadCpuTime();
                    long calls = 0;
                    do {
                        if (v == 1) {
                            QuantMatmul.matmul(interleaved, x, n, y, 0, out);
                        } else if (PackedMatmul.packs(n)) {
                            PackedMatmul.pack(x, n, in, packed);
                            PackedMatmul.matmul(rowMajor, packed, n, y, 0, out);
                        } else {
                            QuantMatmul.matmul(rowMajor, x, n, y, 0, out);
                        }
                        calls++;
                    } while (cpu.getCurrentThreadCpuTime() - t0 < 200_000_000L);
                    if (round >= 0) {
                        rate[v][round] = calls * (double) n * in * out / (cpu.getCurrentThreadCpuTime() - t0);
                    }
                }
            }
            double[] ratio = new double[rounds];
            for (int i = 0; i < rounds; i++) ratio[i] = rate[1][i] / rate[0][i];
            Arrays.sort(ratio);
            System.out.printf(Locale.ROOT, "Q4_0 %d x %d, n %d: file layout %.1f, interleaved %.1f multiply-adds/ns of CPU;"
                            + " interleaved / file median %.2f (range %.2f-%.2f)%n",
                    in, out, n, median(rate[0]), median(rate[1]), ratio[rounds / 2], ratio[0], ratio[rounds - 1]);
        }
    }

    private static MemorySegment offHeap(byte[] bytes) {
        return Arena.ofAuto().allocate(bytes.length, 64).copyFrom(MemorySegment.ofArray(bytes));
    }

    private static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }
}

package io.kvtier.model;

import io.kvtier.model.tensor.Interleaved;
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
 * Benchmark (not a test): the batched product with encoded weights, {@link QuantMatmul#matmul}
 * (4 rows decoded into scratch, 4 x 4 row-wise tiles with lane reductions) against
 * {@link PackedMatmul#matmul(Weight, float[], int, float[], int, int)} (8 rows decoded into the
 * tile, vectorised across the batch, packing included), on the 15M and 110M shapes' matrices,
 * one thread, alternating, in the thread's CPU time. Prints multiply-adds per ns of CPU (median
 * of the rounds) and the median per-round ratio. Args: type (Q4_0, Q8_0), batch rows, rounds,
 * and optionally {@code interleaved} (Q4_0): then the first variant is the route a Q4_0 matrix in
 * its file layout takes (packed from a vector of rows, row-wise tiles below) and the second the
 * same matrix repacked by {@link Interleaved} through {@link QuantMatmul#matmul} (its group
 * tiles). The weights are off-heap, as a model file's bytes are: the group decode's short loads
 * from a heap {@code byte[]} segment ran about 7x slower.
 * <pre>
 * java --add-modules jdk.incubator.vector -cp kvtier-engine/target/classes:kvtier-engine/target/test-classes \
 *      io.kvtier.model.QuantBatchComparison Q4_0 32 5 [interleaved]
 * </pre>
 */
public final class QuantBatchComparison {

    private static final int[][] SHAPES = {{288, 864}, {768, 288}, {288, 32000}, {768, 2304}, {768, 4096}, {2048, 768},
            {768, 32000}};

    private QuantBatchComparison() {
    }

    public static void main(String[] args) {
        TensorType type = TensorType.valueOf(args[0]);
        int n = Integer.parseInt(args[1]);
        int rounds = Integer.parseInt(args[2]);
        boolean interleavedAb = args.length > 3 && args[3].equals("interleaved");
        ThreadMXBean cpu = ManagementFactory.getThreadMXBean();
        Random r = new Random(5);
        for (int[] shape : SHAPES) {
            int in = shape[0], out = shape[1];
            float[] values = new float[out * in];
            for (int i = 0; i < values.length; i++) values[i] = (float) r.nextGaussian();
            ByteBuffer buf = ByteBuffer.allocate((int) type.rowBytes(in) * out).order(ByteOrder.LITTLE_ENDIAN);
            ScalarQuant.encode(type, values, 0, out * in, buf);
            Weight w = new Weight(type, offHeap(buf.array()), out, in);
            Weight second = null;
            if (interleavedAb) {
                MemorySegment copy = offHeap(buf.array());
                Interleaved.repackInPlace(TensorType.Q4_0, copy, out, in);
                second = new Weight(type, copy, out, in, true);
            }
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
                        if (v == 1 && second != null) {
                            QuantMatmul.matmul(second, x, n, y, 0, out);
                        } else if (v == 0 && !(interleavedAb && PackedMatmul.packs(n))) {
                            QuantMatmul.matmul(w, x, n, y, 0, out);
                        } else {
                            PackedMatmul.pack(x, n, in, packed);
                            PackedMatmul.matmul(w, packed, n, y, 0, out);
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
            String[] names = interleavedAb ? new String[] {"file layout", "interleaved"} : new String[] {"row-wise tiles", "packed"};
            System.out.printf(Locale.ROOT, "%s %d x %d, n %d: %s %.1f, %s %.1f multiply-adds/ns of CPU; %s / %s median %.2f (range %.2f-%.2f)%n",
                    type, in, out, n, names[0], median(rate[0]), names[1], median(rate[1]), names[1], names[0], median(ratio),
                    Arrays.stream(ratio).min().orElse(0), Arrays.stream(ratio).max().orElse(0));
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

package io.kvtier.model;

import io.kvtier.kv.KvLayout;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ForkJoinPool;

/**
 * Benchmark (not a test): whole forward steps on one thread with the batched F32 product packed
 * across the batch ({@link PackedMatmul}, what {@link Kernels#best()} does) against the row-wise
 * tiles it replaced (the same kernels with packing off), A B A B in one JVM: 32-sequence decode
 * steps (every sequence at position 128 and on) and a 128-token prefill chunk. Timed in the
 * thread's CPU time (on a shared machine wall time measures the other jobs). Run with the
 * engine's test classpath:
 * <pre>
 * java --add-modules jdk.incubator.vector -cp kvtier-engine/target/classes:kvtier-engine/target/test-classes:kvtier-cli/target/kvtier.jar \
 *      io.kvtier.model.BatchedDecodeComparison /tmp/15m.bin [rounds]
 * </pre>
 */
public final class BatchedDecodeComparison {

    private static final int SEQUENCES = 32, PROMPT = 128, STEPS = 8;

    private BatchedDecodeComparison() {
    }

    public static void main(String[] args) {
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 9;
        ForkJoinPool one = new ForkJoinPool(1);
        ThreadMXBean cpu = ManagementFactory.getThreadMXBean();
        try (Checkpoint m = Checkpoint.load(Path.of(args[0]));
             Transformer packed = new Transformer(m, Kernels.best(), new Parallel(one));
             Transformer rowwise = new Transformer(m, new RowwiseKernels(), new Parallel(one));
             Arena arena = Arena.ofShared()) {
            Transformer[] variants = {rowwise, packed};
            KvLayout layout = m.config().kvLayout(16);
            int blocksPerSeq = layout.blocksFor(PROMPT + STEPS + 1);
            MemorySegment slab = arena.allocate(layout.bytesPerBlock() * blocksPerSeq * SEQUENCES, 64);
            int[][] tables = new int[SEQUENCES][blocksPerSeq];
            for (int s = 0; s < SEQUENCES; s++) {
                for (int b = 0; b < blocksPerSeq; b++) {
                    tables[s][b] = s * blocksPerSeq + b;
                }
            }
            double[][] decode = new double[2][rounds], prefill = new double[2][rounds];
            for (int r = -2; r < rounds; r++) {   // 2 warm-up rounds
                for (int v = 0; v < 2; v++) {
                    long t0 = cpu.getCurrentThreadCpuTime();
                    for (int s = 0; s < SEQUENCES; s++) {
                        variants[v].forward(List.of(new SequenceChunk(prompt(s), 0, tables[s], true)), slab, layout);
                    }
                    long t1 = cpu.getCurrentThreadCpuTime();
                    for (int step = 0; step < STEPS; step++) {
                        List<SequenceChunk> batch = new ArrayList<>();
                        for (int s = 0; s < SEQUENCES; s++) {
                            batch.add(new SequenceChunk(new int[] {(s * 31 + step * 7) % m.config().vocabSize()}, PROMPT + step, tables[s], true));
                        }
                        variants[v].forward(batch, slab, layout);
                    }
                    long t2 = cpu.getCurrentThreadCpuTime();
                    if (r >= 0) {
                        prefill[v][r] = SEQUENCES * PROMPT / ((t1 - t0) / 1e9);
                        decode[v][r] = SEQUENCES * STEPS / ((t2 - t1) / 1e9);
                    }
                }
            }
            String[] names = {"row-wise tiles", "packed"};
            for (int v = 0; v < 2; v++) {
                System.out.printf(Locale.ROOT, "%-15s 32-sequence decode median %.0f tokens/s, prefill (128-token chunks) %.0f tokens/s (per second of CPU, 1 thread)%n",
                        names[v], median(decode[v]), median(prefill[v]));
            }
            double[] dr = new double[rounds], pr = new double[rounds];
            for (int r = 0; r < rounds; r++) {
                dr[r] = decode[1][r] / decode[0][r];
                pr[r] = prefill[1][r] / prefill[0][r];
            }
            System.out.printf(Locale.ROOT, "packed / row-wise: decode median %.2f (range %.2f-%.2f), prefill median %.2f (range %.2f-%.2f), %d rounds%n",
                    median(dr), min(dr), max(dr), median(pr), min(pr), max(pr), rounds);
        } finally {
            one.shutdownNow();
        }
    }

    private static int[] prompt(int s) {
        int[] p = new int[PROMPT];
        for (int i = 0; i < PROMPT; i++) {
            p[i] = 1 + (s * 131 + i * 17) % 1000;
        }
        return p;
    }

    static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }

    static double min(double[] v) {
        return Arrays.stream(v).min().orElse(0);
    }

    static double max(double[] v) {
        return Arrays.stream(v).max().orElse(0);
    }
}

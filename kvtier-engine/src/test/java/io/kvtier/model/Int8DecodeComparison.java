package io.kvtier.model;

import io.kvtier.model.gguf.GgufModel;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.ForkJoinPool;

/**
 * Benchmark (not a test): single-sequence decode steps of a GGUF model on one thread with Q8_0
 * activations ({@link QuantActivations#Q8_0}, int8 products for Q8_0 weights) against F32
 * activations, A B A B in one JVM, each round a fresh sequence fed {@code steps} tokens one per
 * step; timed in the thread's CPU time (wall time on a shared machine measures the other jobs).
 * Prints tokens per CPU-second of each and the per-round ratio. Run with the engine's classes:
 * <pre>
 * java --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED \
 *      -cp kvtier-engine/target/classes:kvtier-engine/target/test-classes:kvtier-cli/target/kvtier.jar \
 *      io.kvtier.model.Int8DecodeComparison /tmp/110m-q8_0.gguf 64 7
 * </pre>
 */
public final class Int8DecodeComparison {

    private Int8DecodeComparison() {
    }

    public static void main(String[] args) throws Exception {
        int steps = Integer.parseInt(args[1]);
        int rounds = Integer.parseInt(args[2]);
        ForkJoinPool one = new ForkJoinPool(1);
        ThreadMXBean cpu = ManagementFactory.getThreadMXBean();
        Path cacheDir = Files.createTempDirectory("int8-decode");
        try (GgufModel m = GgufModel.load(Path.of(args[0]), new DigestCache(cacheDir));
             Transformer q8 = new Transformer(m, Kernels.best(), one, QuantActivations.Q8_0);
             Transformer f32 = new Transformer(m, Kernels.best(), one, QuantActivations.F32)) {
            Transformer[] variants = {f32, q8};
            double[][] rate = new double[2][rounds];
            for (int r = -2; r < rounds; r++) {   // 2 warm-up rounds
                for (int v = 0; v < 2; v++) {
                    try (LogitsDriver d = new LogitsDriver(variants[v], 16, steps)) {
                        long t0 = cpu.getCurrentThreadCpuTime();
                        int token = 1;
                        for (int s = 0; s < steps; s++) {
                            token = LogitsDriver.argmax(d.feed(token));
                        }
                        long t1 = cpu.getCurrentThreadCpuTime();
                        if (r >= 0) rate[v][r] = steps / ((t1 - t0) / 1e9);
                    }
                }
            }
            double[] ratio = new double[rounds];
            for (int r = 0; r < rounds; r++) ratio[r] = rate[1][r] / rate[0][r];
            System.out.printf("tokens per CPU-second: f32 %s%n  q8_0 %s%n  q8_0 / f32 per round %s%n",
                    Arrays.toString(round(rate[0])), Arrays.toString(round(rate[1])), Arrays.toString(round(ratio)));
            Arrays.sort(ratio);
            System.out.printf("median ratio %.3f (%.3f-%.3f)%n", ratio[rounds / 2], ratio[0], ratio[rounds - 1]);
        }
    }

    private static double[] round(double[] v) {
        return Arrays.stream(v).map(x -> Math.round(x * 100) / 100.0).toArray();
    }
}

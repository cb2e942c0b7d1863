package io.kvtier.model;

import io.kvtier.model.gguf.GgufModel;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ForkJoinPool;

/**
 * Profiling target (not a test): single-sequence decode of a GGUF model with Q8_0 activations
 * on one thread, {@code rounds} fresh sequences of {@code steps} tokens, nothing else in the JVM,
 * so that a sampling profiler (JFR) sees only the decode step; prints tokens per CPU-second.
 * <pre>
 * java --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED \
 *      -XX:StartFlightRecording=filename=/tmp/d.jfr,settings=profile \
 *      -cp kvtier-engine/target/classes:kvtier-engine/target/test-classes:kvtier-cli/target/kvtier.jar \
 *      io.kvtier.model.Int8DecodeProfile /tmp/15m-q4_0.gguf 256 20
 * </pre>
 */
public final class Int8DecodeProfile {

    private Int8DecodeProfile() {
    }

    public static void main(String[] args) throws Exception {
        int steps = Integer.parseInt(args[1]);
        int rounds = Integer.parseInt(args[2]);
        ThreadMXBean cpu = ManagementFactory.getThreadMXBean();
        try (GgufModel m = GgufModel.load(Path.of(args[0]), new DigestCache(Files.createTempDirectory("int8-profile")));
             Transformer q8 = new Transformer(m, Kernels.best(), new ForkJoinPool(1), QuantActivations.Q8_0)) {
            for (int r = 0; r < rounds; r++) {
                try (LogitsDriver d = new LogitsDriver(q8, 16, steps)) {
                    long t0 = cpu.getCurrentThreadCpuTime();
                    int token = 1;
                    for (int s = 0; s < steps; s++) {
                        token = LogitsDriver.argmax(d.feed(token));
                    }
                    System.out.printf("round %d: %.0f tokens per CPU-second%n", r, steps / ((cpu.getCurrentThreadCpuTime() - t0) / 1e9));
                }
            }
        }
    }
}

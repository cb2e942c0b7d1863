package io.kvtier.engine;

import io.kvtier.kv.ExtraKeys;
import io.kvtier.model.Checkpoint;
import io.kvtier.model.Kernels;
import io.kvtier.model.Model;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;

/**
 * Benchmark (not a test): CPU time and bytes allocated per decoded token through the whole
 * {@link Engine} (scheduling, forward pass, sampling), for one sequence and for 32, greedy, each
 * after a 1-token prompt, as {@code bench generate} decodes. CPU time, not wall time: on a shared
 * machine a step's wait for a core does not count. Per round and sequence count it prints the
 * process's CPU (every thread: pool helpers, their spinning, GC, JIT), the engine thread's CPU,
 * the wall time and the engine thread's allocation, each per token. To compare two builds, run
 * both at once (same load) with each build's classes first on the class path:
 * <pre>
 * java --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -XX:+UseParallelGC \
 *      -cp kvtier-engine/target/test-classes:kvtier-cli/target/kvtier.jar \
 *      io.kvtier.engine.EngineCpuPerToken /work/m/15m.bin THREADS ROUNDS STEPS
 * </pre>
 */
public final class EngineCpuPerToken {

    private static final int SEQUENCES = 32;
    private static long ids;

    public static void main(String[] args) {
        Model m = Checkpoint.load(Path.of(args[0]));
        int threads = Integer.parseInt(args[1]);
        int rounds = Integer.parseInt(args[2]);
        int steps = Math.min(Integer.parseInt(args[3]), m.config().seqLen() - 1);
        int blocks = (SEQUENCES + 1) * m.config().kvLayout(16).blocksFor(m.config().seqLen());
        EngineConfig config = new EngineConfig(16, blocks, 4096, SEQUENCES, false, -1);
        var threadBean = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        try (Engine engine = LlamaRunner.engine(m, config, Kernels.best(), threads)) {
            for (int w = 0; w < 3; w++) {   // warm-up: C2 compiles both paths
                run(engine, 1, steps);
                run(engine, SEQUENCES, steps);
            }
            for (int r = 0; r < rounds; r++) {
                for (int n : new int[] {1, SEQUENCES}) {
                    long alloc0 = threadBean.getCurrentThreadAllocatedBytes();
                    long process0 = os.getProcessCpuTime();
                    long engine0 = threadBean.getCurrentThreadCpuTime();
                    long wall0 = System.nanoTime();
                    long tokens = run(engine, n, steps);
                    long wall = System.nanoTime() - wall0;
                    long process = os.getProcessCpuTime() - process0;
                    long engineCpu = threadBean.getCurrentThreadCpuTime() - engine0;
                    long alloc = threadBean.getCurrentThreadAllocatedBytes() - alloc0;
                    System.out.printf("round %d, %2d sequences: %.1f us process CPU, %.1f us engine-thread CPU, %.1f us wall,"
                            + " %.0f bytes allocated by the engine thread, per token%n", r, n, process / 1e3 / tokens,
                            engineCpu / 1e3 / tokens, wall / 1e3 / tokens, (double) alloc / tokens);
                }
            }
        }
    }

    /** {@code n} sequences of {@code steps} tokens each to the end; returns the tokens generated. */
    private static long run(Engine engine, int n, int steps) {
        long before = engine.stats().generatedTokens();
        for (int i = 0; i < n; i++) {
            engine.submit(new Request(ids++, new int[] {1 + i % 500}, steps, SamplingParams.GREEDY, ExtraKeys.NONE));
        }
        while (engine.hasWork()) {
            engine.advance();
        }
        return engine.stats().generatedTokens() - before;
    }
}

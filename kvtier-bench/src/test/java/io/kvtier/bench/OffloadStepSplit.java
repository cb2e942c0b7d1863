package io.kvtier.bench;

import io.kvtier.engine.Engine;
import io.kvtier.engine.EngineConfig;
import io.kvtier.engine.LlamaRunner;
import io.kvtier.engine.OffloadSetup;
import io.kvtier.engine.Request;
import io.kvtier.engine.SamplingParams;
import io.kvtier.kv.ExtraKeys;
import io.kvtier.model.Kernels;
import io.kvtier.model.Model;
import io.kvtier.model.Models;
import io.kvtier.offload.OffloadConfig;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Benchmark (not a test): where {@code bench offload}'s 1-sequence cost falls, step by step. The
 * twin of {@link TwinDecode} (engines "off" and "on" in one process, one step each per turn, the
 * order flipping every turn), with each pair of steps' engine-thread CPU time put in one of two
 * bins: the steps in which "on" stored a chunk, and the others; and by the token's position in its
 * 16-token block (the "phase"). The on - off difference of the other steps is what offloading costs
 * a step that stores nothing (its bookkeeping, and the caches its stores disturbed). Prints one line
 * per round (after two warm-up rounds) with the transfer threads' CPU per step.
 *
 * <p>Args: MODEL BATCH SECONDS_PER_ROUND [MODE]. MODE {@code aa}: "on" is a second "off" engine (an
 * A/A control: the twin's own bias); {@code prompt-only}: "on" stores only the blocks holding prompt
 * tokens (one per request here: the per-step bookkeeping without the decode stores). One compute
 * thread. Run after {@code mvn -pl kvtier-bench -am test-compile}:
 * <pre>
 * java --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -XX:+UseParallelGC \
 *      -cp kvtier-bench/target/test-classes:kvtier-cli/target/kvtier.jar io.kvtier.bench.OffloadStepSplit \
 *      ../shared/models/stories260K.bin 1 2
 * </pre>
 */
public final class OffloadStepSplit {

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    private static final int ROUNDS = 14;
    private static final int WARM_ROUNDS = 2;

    private OffloadStepSplit() {
    }

    /** Chunks stored so far; for an "off" engine (A/A), one per 16 tokens, so that its bins match. */
    private static long stored(Engine e) {
        return e.offload() == null ? e.stats().generatedTokens() / TwinDecode.BLOCK_SIZE
                : e.offload().stats().blocksStored().getOrDefault("host", 0L);
    }

    private static long transferCpu() {
        long sum = 0;
        for (java.lang.management.ThreadInfo t : THREADS.getThreadInfo(THREADS.getAllThreadIds())) {
            if (t != null && t.getThreadName().startsWith("kvtier-transfer")) {
                sum += Math.max(0, THREADS.getThreadCpuTime(t.getThreadId()));
            }
        }
        return sum;
    }

    public static void main(String[] args) {
        Path model = Path.of(args[0]);
        int batch = Integer.parseInt(args[1]);
        long roundNanos = (long) (Double.parseDouble(args[2]) * 1e9);
        String mode = args.length > 3 ? args[3] : "";
        Model a = Models.load(model);
        Model b = Models.load(model);
        int blocks = TwinDecode.deviceBlocks(a, batch);
        EngineConfig ec = new EngineConfig(TwinDecode.BLOCK_SIZE, blocks, 4096, Math.max(batch, 1), false, -1);
        OffloadSetup setup = mode.equals("aa") ? OffloadSetup.OFF
                : new OffloadSetup(0, 2 * blocks, "lru", OffloadConfig.DEFAULT.withOffloadPromptOnly(mode.equals("prompt-only")));
        int steps = Math.min(254, a.config().seqLen() - 2);
        long id = 0;
        long turns = 0;
        try (Engine off = LlamaRunner.engine(a, ec, Kernels.best(), 1, OffloadSetup.OFF);
             Engine on = LlamaRunner.engine(b, ec, Kernels.best(), 1, setup)) {
            for (int round = 0; round < ROUNDS; round++) {
                long[] offCpu = new long[2]; // [0] steps where "on" stored, [1] the others
                long[] onCpu = new long[2];
                long[] count = new long[2];
                long[] phaseDiff = new long[TwinDecode.BLOCK_SIZE];
                long[] phaseCount = new long[TwinDecode.BLOCK_SIZE];
                long drain = 0;
                long waves = 0;
                long transfer0 = transferCpu();
                long end = System.nanoTime() + roundNanos;
                while (System.nanoTime() < end) {
                    for (int i = 0; i < batch; i++, id++) {
                        int[] p = {1 + (int) (id % 400), 1 + (int) (id / 400 % 400)};
                        off.submit(new Request(id, p, steps, SamplingParams.GREEDY, ExtraKeys.NONE));
                        on.submit(new Request(id, p, steps, SamplingParams.GREEDY, ExtraKeys.NONE));
                    }
                    off.step(); // the prefills: not measured
                    on.step();
                    while (off.hasWork() || on.hasWork()) {
                        long before = stored(on);
                        boolean offFirst = (turns++ & 1) == 0;
                        long c0 = THREADS.getCurrentThreadCpuTime();
                        (offFirst ? off : on).advance();
                        long c1 = THREADS.getCurrentThreadCpuTime();
                        (offFirst ? on : off).advance();
                        long c2 = THREADS.getCurrentThreadCpuTime();
                        long offNs = offFirst ? c1 - c0 : c2 - c1;
                        long onNs = offFirst ? c2 - c1 : c1 - c0;
                        int bin = stored(on) != before ? 0 : 1;
                        offCpu[bin] += offNs;
                        onCpu[bin] += onNs;
                        count[bin]++;
                        int phase = (int) (on.stats().generatedTokens() % TwinDecode.BLOCK_SIZE);
                        phaseDiff[phase] += onNs - offNs;
                        phaseCount[phase]++;
                    }
                    long c0 = THREADS.getCurrentThreadCpuTime();
                    on.drainTransfers();
                    drain += THREADS.getCurrentThreadCpuTime() - c0;
                    waves++;
                }
                if (round < WARM_ROUNDS) {
                    continue;
                }
                long all = count[0] + count[1];
                StringBuilder phases = new StringBuilder();
                for (int i = 0; i < phaseDiff.length; i++) {
                    phases.append(String.format(Locale.ROOT, " %.2f", phaseDiff[i] / 1e3 / Math.max(1, phaseCount[i])));
                }
                System.out.printf(Locale.ROOT, "store steps %d: off %.2f us, on %.2f us (on - off %.2f); other steps %d:"
                                + " off %.2f, on %.2f (on - off %.2f); drain %.2f us per wave; transfer threads %.3f us per step;"
                                + " on - off per step, all in %.3f us; by phase:%s%n",
                        count[0], offCpu[0] / 1e3 / count[0], onCpu[0] / 1e3 / count[0], (onCpu[0] - offCpu[0]) / 1e3 / count[0],
                        count[1], offCpu[1] / 1e3 / count[1], onCpu[1] / 1e3 / count[1], (onCpu[1] - offCpu[1]) / 1e3 / count[1],
                        drain / 1e3 / waves, (transferCpu() - transfer0) / 1e3 / all,
                        (onCpu[0] - offCpu[0] + onCpu[1] - offCpu[1] + drain + transferCpu() - transfer0) / 1e3 / all, phases);
            }
        }
    }
}

package io.kvtier.engine;

import io.kvtier.kv.BlockHasher;
import io.kvtier.kv.BlockPool;
import io.kvtier.kv.ExtraKeys;
import io.kvtier.kv.KvLayout;
import io.kvtier.kv.Namespace;
import io.kvtier.offload.OffloadConfig;
import io.kvtier.offload.OffloadScheduler;
import io.kvtier.tier.KvEvents;
import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Benchmark (not a test): what offloading (decode blocks stored too) costs the engine thread per
 * decode step, with a fake model that computes nothing ({@link FakeIdleModel}), so that the step
 * is the engine's own bookkeeping and the difference on - off is offloading's: its bookkeeping, the
 * copies it runs on the engine thread, and the hand-off of the rest. Blocks of stories260K's shape
 * (20 KiB), waves of 1 or 32 requests of 256 tokens as {@code bench offload} decodes them, the
 * "on" engine's host tier twice its device pool and full before timing; rounds alternate off-on,
 * on-off in one JVM; CPU time per step of the engine thread and of the transfer threads, and the
 * engine thread's allocation per step. Properties: {@code kvtier.fake.flushKib=N} has each forward
 * pass walk N KiB of its own memory (2048: about stories260K's footprint, so that offloading's
 * bookkeeping meets the cold caches it meets in a real step: 0.57 us per step at 0 KiB became 1.67
 * at 2048, 1 sequence, loaded); {@code kvtier.fake.promptOnly=true} stores prompt blocks only (the
 * per-step bookkeeping without the decode stores). Run after {@code mvn -pl kvtier-engine -am test-compile}:
 * <pre>
 * java -cp kvtier-engine/target/classes:kvtier-engine/target/test-classes:kvtier-core/target/classes:kvtier-cli/target/kvtier.jar \
 *      io.kvtier.engine.OffloadStepCpuComparison [ROUNDS]
 * </pre>
 */
public final class OffloadStepCpuComparison {

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    private static final KvLayout LAYOUT = new KvLayout(5, 4, 8, 16);
    private static final int SEQ_LEN = 512;
    private static final int STEPS = 256;
    private static final int VOCAB = 512;
    private static final int WAVES = 40;

    private OffloadStepCpuComparison() {
    }

    /**
     * A fake model: writes no KV and samples token {@code 2 + position % 500} (never the stop
     * token), so that a step costs the engine only its own bookkeeping.
     */
    static final class FakeIdleModel implements ModelRunner {
        private final float[][] oneHot = new float[VOCAB][];
        /** KiB of memory each forward pass walks (property kvtier.fake.flushKib, default 0): a real pass's cache footprint. */
        private final long[] footprint = new long[Integer.getInteger("kvtier.fake.flushKib", 0) * 128];

        FakeIdleModel() {
            for (int t = 0; t < VOCAB; t++) {
                oneHot[t] = new float[VOCAB];
                oneHot[t][t] = 1f;
            }
        }

        @Override
        public float[][] forward(List<ScheduledChunk> chunks) {
            for (int i = 0; i < footprint.length; i += 8) {
                footprint[i]++;
            }
            float[][] out = new float[chunks.size()][];
            for (int i = 0; i < out.length; i++) {
                ScheduledChunk c = chunks.get(i);
                out[i] = oneHot[2 + (c.startPos() + c.tokens().length) % 500];
            }
            return out;
        }

        @Override
        public int vocabSize() {
            return VOCAB;
        }

        @Override
        public int maxPositions() {
            return SEQ_LEN;
        }
    }

    private static final class Side implements AutoCloseable {
        final Engine engine;
        final int batch;
        final boolean on;
        long nextId;
        int tierChunks;

        Side(int batch, boolean on) {
            this.batch = batch;
            this.on = on;
            int deviceBlocks = (batch + 1) * LAYOUT.blocksFor(SEQ_LEN);
            BlockPool pool = new BlockPool(deviceBlocks, LAYOUT);
            OffloadConfig config = OffloadConfig.DEFAULT.withOffloadPromptOnly(Boolean.getBoolean("kvtier.fake.promptOnly"));
            Namespace ns = Namespace.of("fake-idle", LAYOUT, 1);
            tierChunks = 2 * deviceBlocks;
            OffloadScheduler offload = on ? new OffloadSetup(0, tierChunks, "lru", config).build(pool, ns, KvEvents.discarding()) : null;
            EngineConfig ec = new EngineConfig(16, deviceBlocks, 4096, Math.max(batch, 1), false, -1);
            this.engine = new Engine(ec, pool, new FakeIdleModel(), BlockHasher.sha256(ns), offload);
        }

        /** {@code waves} waves; returns {engine-thread CPU ns, transfer-thread CPU ns, allocated bytes, steps}. */
        long[] run(int waves) {
            long[] r = new long[4];
            for (int w = 0; w < waves; w++) {
                for (int i = 0; i < batch; i++) {
                    long id = nextId++;
                    engine.submit(new Request(id, new int[] {1 + (int) (id % 400), 1 + (int) (id / 400 % 400)}, STEPS,
                            SamplingParams.GREEDY, ExtraKeys.NONE));
                }
                engine.step();
                long steps0 = engine.stats().steps();
                long cpu0 = THREADS.getCurrentThreadCpuTime();
                long transfer0 = transferCpu();
                long alloc0 = THREADS.getCurrentThreadAllocatedBytes();
                engine.runToCompletion();
                engine.drainTransfers();
                r[0] += THREADS.getCurrentThreadCpuTime() - cpu0;
                r[1] += transferCpu() - transfer0;
                r[2] += THREADS.getCurrentThreadAllocatedBytes() - alloc0;
                r[3] += engine.stats().steps() - steps0;
            }
            return r;
        }

        @Override
        public void close() {
            engine.close();
        }
    }

    /** CPU time of the transfer threads now (all engines'), ns. */
    private static long transferCpu() {
        long n = 0;
        for (java.lang.management.ThreadInfo t : THREADS.getThreadInfo(THREADS.getAllThreadIds())) {
            if (t != null && t.getThreadName().startsWith("kvtier-transfer")) {
                n += Math.max(0, THREADS.getThreadCpuTime(t.getThreadId()));
            }
        }
        return n;
    }

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 7;
        for (int batch : new int[] {1, 32}) {
            double[][] cpu = new double[2][rounds];
            double[] transfer = new double[rounds];
            double[][] alloc = new double[2][rounds];
            int waves = batch == 1 ? WAVES * 8 : WAVES;
            try (Side off = new Side(batch, false); Side on = new Side(batch, true)) {
                for (int w = 0; w < 3; w++) {
                    off.run(waves);
                    on.run(waves);
                }
                for (int r = 0; r < rounds; r++) {
                    long[] a;
                    long[] b;
                    if (r % 2 == 0) {
                        a = off.run(waves);
                        b = on.run(waves);
                    } else {
                        b = on.run(waves);
                        a = off.run(waves);
                    }
                    cpu[0][r] = a[0] / (double) a[3];
                    cpu[1][r] = b[0] / (double) b[3];
                    transfer[r] = b[1] / (double) b[3];
                    alloc[0][r] = a[2] / (double) a[3];
                    alloc[1][r] = b[2] / (double) b[3];
                }
            }
            System.out.printf(Locale.ROOT, "%2d sequences, medians of %d rounds, per step: engine-thread CPU off %.2f us, on %.2f us"
                            + " (offloading %.2f us; round differences %s), transfer threads %.2f us; allocated off %.0f B, on %.0f B%n",
                    batch, rounds, median(cpu[0]) / 1e3, median(cpu[1]) / 1e3, medianDiff(cpu) / 1e3, diffs(cpu),
                    median(transfer) / 1e3, median(alloc[0]), median(alloc[1]));
        }
    }

    private static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }

    private static double medianDiff(double[][] v) {
        double[] d = new double[v[0].length];
        for (int i = 0; i < d.length; i++) {
            d[i] = v[1][i] - v[0][i];
        }
        return median(d);
    }

    private static String diffs(double[][] v) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < v[0].length; i++) {
            b.append(String.format(Locale.ROOT, "%s%.2f", i == 0 ? "" : " ", (v[1][i] - v[0][i]) / 1e3));
        }
        return b.toString();
    }
}

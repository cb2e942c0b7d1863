package io.kvtier.cli;

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
import io.kvtier.text.Plural;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * {@code bench offload}'s decode figures: decode tokens/s with offloading on (decode blocks stored
 * too) against off, in waves of 1 or 32 requests.
 *
 * <p>Fair by construction: one engine per side for the whole comparison, both warmed alike (the
 * same waves), the sides measured in pairs whose order alternates (off-on, on-off, ...), both
 * fed the same requests (distinct prompts, so no side gets a prefix hit). The "on" engine's host
 * tier is twice the device pool and full before timing starts: the steady state of a server,
 * where every store reuses the slot of an evicted chunk. A third side, "on, fresh tier", is a new
 * engine per pair whose host tier is untouched: each store then also makes its slot's pages
 * resident (the tier reserves its memory lazily), the cost a server pays once per slot.
 */
final class OffloadDecodeBench {

    /** Decode time measured per side per pair, at least (whole waves of requests). */
    private static final long DECODE_NANOS = 300_000_000L;

    /** Warm-up of each engine before timing, at least: C2 must compile the kernels first. */
    private static final long WARM_NANOS = 1_000_000_000L;

    /**
     * Chunk stores run before any figure, so that the JIT has compiled the store path (the tier's
     * bookkeeping, the copy and its checksum, the completion): C2 compiles a method after about
     * 5,000 calls, and at 1 sequence a store comes once every 16 tokens, so within the figures'
     * own warm-up the path still ran interpreted or in C1's profiling code, at 10-40 times its
     * compiled cost (an offloading server pays that once, in its first ~80,000 tokens).
     */
    static final long STORE_PATH_WARM_CHUNKS = 10_000;

    /** Distinct first and second prompt tokens: 400 x 400 prompts before one repeats. */
    private static final int PROMPT_SPAN = 400;

    /**
     * The process's CPU time: on a loaded machine, where the wall clock mostly measures other
     * processes, CPU time per token still compares the work of the two sides (the store thread's
     * included).
     */
    private static final com.sun.management.OperatingSystemMXBean PROCESS =
            (com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean();

    private final Path model;
    private final int threads;
    private final int repeats;

    OffloadDecodeBench(Path model, int threads, int repeats) {
        this.model = model;
        this.threads = threads;
        this.repeats = repeats;
    }

    /** One engine and the id of its next request. */
    private final class Side implements AutoCloseable {
        final Engine engine;
        final int batch;
        final int steps;
        long nextId;
        /** Process CPU time per generated token of the last {@link #tokensPerSecond} call, ns. */
        double cpuPerToken;

        Side(int batch, OffloadSetup setup) {
            Model cp = Models.load(model);
            this.batch = batch;
            this.steps = Math.min(256, cp.config().seqLen() - 2);
            EngineConfig config = new EngineConfig(16, deviceBlocks(cp, batch), 4096, Math.max(batch, 1), false, -1);
            this.engine = LlamaRunner.engine(cp, config, Kernels.best(), threads, setup);
        }

        /** Decode tokens/s over whole waves until at least {@code minNanos} are timed. */
        double tokensPerSecond(long minNanos) {
            long tokens = 0;
            long nanos = 0;
            long cpu = 0;
            // waves until minNanos are timed: one wave of the small model lasts about 13 ms, where
            // a single scheduler stall of 4 ms would decide the figure
            do {
                for (int i = 0; i < batch; i++) {
                    long id = nextId++;
                    int[] prompt = {1 + (int) (id % PROMPT_SPAN), 1 + (int) (id / PROMPT_SPAN % PROMPT_SPAN)};
                    engine.submit(new Request(id, prompt, steps, SamplingParams.GREEDY, ExtraKeys.NONE));
                }
                engine.step(); // the prefills
                long c0 = PROCESS.getProcessCpuTime();
                long t0 = System.nanoTime();
                long before = engine.stats().generatedTokens();
                engine.runToCompletion();
                engine.drainTransfers(); // the stores are part of the cost
                nanos += System.nanoTime() - t0;
                cpu += PROCESS.getProcessCpuTime() - c0;
                tokens += engine.stats().generatedTokens() - before;
            } while (nanos < minNanos);
            cpuPerToken = (double) cpu / tokens;
            return tokens / (nanos / 1e9);
        }

        long chunksStored() {
            return engine.offload() == null ? 0 : engine.offload().stats().blocksStored().getOrDefault("host", 0L);
        }

        @Override
        public void close() {
            engine.close();
        }
    }

    private static int deviceBlocks(Model cp, int batch) {
        return (batch + 1) * cp.config().kvLayout(16).blocksFor(cp.config().seqLen());
    }

    /** Chunks of the "on" engine's host tier for waves of {@code batch}: twice its device pool. */
    private int tierChunks(int batch) {
        try (Model cp = Models.load(model)) {
            return 2 * deviceBlocks(cp, batch);
        }
    }

    void run() {
        System.out.println("== decode with offloading (decode blocks stored too) vs without, " + model.getFileName()
                + " (one engine per side, warmed alike, pairs in alternating order; on: host tier full, slots reused;"
                + " the store path JIT-compiled first: " + STORE_PATH_WARM_CHUNKS + " chunk stores) ==");
        warmStorePath();
        for (int batch : new int[] {1, 32}) {
            compare(batch);
        }
    }

    /**
     * {@link #STORE_PATH_WARM_CHUNKS} chunk stores in waves of 32 requests (32 stores every 16
     * steps) on an engine of their own, so that no figure measures the JIT's warm-up of the store
     * path, which every side of every figure shares.
     */
    private void warmStorePath() {
        int batch = 32;
        OffloadSetup setup = new OffloadSetup(0, tierChunks(batch), "lru", OffloadConfig.DEFAULT.withOffloadPromptOnly(false));
        try (Side s = new Side(batch, setup)) {
            while (s.chunksStored() < STORE_PATH_WARM_CHUNKS) {
                long stored = s.chunksStored();
                s.tokensPerSecond(0);
                if (s.chunksStored() == stored) {
                    throw new IllegalStateException("bench offload: the engine with offloading stored no chunk in a wave of "
                            + batch + " requests while warming the store path (" + stored + " stored)");
                }
            }
        }
    }

    private void compare(int batch) {
        OffloadConfig decodeToo = OffloadConfig.DEFAULT.withOffloadPromptOnly(false);
        int tierChunks = tierChunks(batch);
        OffloadSetup warm = new OffloadSetup(0, tierChunks, "lru", decodeToo);
        OffloadSetup fresh = new OffloadSetup(256L << 20, 0, "lru", decodeToo);
        double[] on = new double[repeats];
        double[] off = new double[repeats];
        double[] cold = new double[repeats];
        double[] cpuRatios = new double[repeats];
        try (Side a = new Side(batch, OffloadSetup.OFF); Side b = new Side(batch, warm)) {
            // The same waves on both sides until the tier is full (every later store evicts) and the
            // JIT had its time; the first measured pair below is one more warm-up.
            long until = System.nanoTime() + WARM_NANOS;
            while (System.nanoTime() < until || b.chunksStored() <= tierChunks) {
                long stored = b.chunksStored();
                b.tokensPerSecond(0);
                a.tokensPerSecond(0);
                if (b.chunksStored() == stored) {
                    // Never a hang: a tier that takes nothing would never fill.
                    throw new IllegalStateException("bench offload: the engine with offloading stored no chunk in a wave of "
                            + batch + " requests (" + stored + " stored, the tier holds " + tierChunks + ")");
                }
            }
            for (int i = 0; i < repeats + 1; i++) {
                double x;
                double y;
                if (i % 2 == 0) {
                    x = a.tokensPerSecond(DECODE_NANOS);
                    y = b.tokensPerSecond(DECODE_NANOS);
                } else {
                    y = b.tokensPerSecond(DECODE_NANOS);
                    x = a.tokensPerSecond(DECODE_NANOS);
                }
                double z;
                try (Side c = new Side(batch, fresh)) {
                    z = c.tokensPerSecond(DECODE_NANOS);
                }
                if (i > 0) {
                    cpuRatios[i - 1] = a.cpuPerToken / b.cpuPerToken;
                    off[i - 1] = x;
                    on[i - 1] = y;
                    cold[i - 1] = z;
                }
            }
        }
        double[] ratios = new double[repeats];
        double[] coldRatios = new double[repeats];
        for (int i = 0; i < repeats; i++) {
            ratios[i] = on[i] / off[i]; // a pair run back to back: the load they met is about the same
            coldRatios[i] = cold[i] / off[i];
        }
        System.out.printf("%s: off %,.0f tokens/s, on %,.0f tokens/s (medians of %d); on/off of each pair: "
                        + "median %.3f, range %.3f-%.3f; process CPU per token off/on: median %.3f, range %.3f-%.3f;"
                        + " on with a fresh tier (new engine, untouched pages)/off: median %.3f%n",
                Plural.count(batch, "sequence"), median(off), median(on), repeats, median(ratios), min(ratios), max(ratios),
                median(cpuRatios), min(cpuRatios), max(cpuRatios), median(coldRatios));
    }

    static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        int n = s.length;
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }

    private static double min(double[] v) {
        return Arrays.stream(v).min().orElse(Double.NaN);
    }

    private static double max(double[] v) {
        return Arrays.stream(v).max().orElse(Double.NaN);
    }
}

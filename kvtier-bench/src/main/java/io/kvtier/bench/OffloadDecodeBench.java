package io.kvtier.bench;

import io.kvtier.engine.ComputePool;
import io.kvtier.engine.OffloadSetup;
import io.kvtier.model.Model;
import io.kvtier.model.Models;
import io.kvtier.offload.OffloadConfig;
import io.kvtier.text.Plural;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;

/**
 * {@code bench offload}'s decode figures: decode with offloading on (decode blocks stored too)
 * against off, in waves of 1 or 32 requests, as a ratio of throughputs (on/off: 1.0 is free,
 * 0.99 costs 1%).
 *
 * <p>Fair by construction ({@link TwinDecode}): both engines live in one process, run the same
 * compiled code and the same requests, and take turns of {@link #STEPS_PER_TURN} step, so the
 * load, clock and caches of the machine fall on both alike. The judged figure is CPU time per
 * generated token (the engine thread, where every step and every inline store runs, plus the
 * transfer threads); wall time is printed beside it. A pair is {@link #PAIR_NANOS} of decode per
 * side; the median of the pairs and their range are printed. The "on" engine's host tier is
 * twice the device pool and full before any pair: the steady state of a server, where every
 * store reuses the slot of an evicted chunk (a fresh tier's first touch of each page is a
 * one-time cost, ~100 us per 20 KiB chunk on this VM, measured in docs/measurements.md).
 */
public final class OffloadDecodeBench {

    /** Steps of one engine before the other's turn: a step of stories260K lasts 0.05-2 ms. */
    static final int STEPS_PER_TURN = 1;

    /** Decode time measured per side per pair, at least (whole waves of requests). */
    static final long PAIR_NANOS = 400_000_000L;

    /** Warm-up of each twin before its pairs, at least: C2 must compile the kernels first. */
    private static final long WARM_NANOS = 1_000_000_000L;

    /**
     * Chunk stores run before any figure, so that the JIT has compiled the store path (the tier's
     * bookkeeping, the copy and its checksum, the completion): C2 compiles a method after about
     * 5,000 calls, and at 1 sequence a store comes once every 16 tokens, so within the figures'
     * own warm-up the path still ran interpreted or in C1's profiling code, at 10-40 times its
     * compiled cost (an offloading server pays that once, in its first ~80,000 tokens).
     */
    static final long STORE_PATH_WARM_CHUNKS = 10_000;

    private final Path model;
    private final int threads;
    private final int pairs;
    private final PrintStream out;

    /**
     * @param model   checkpoint (stories260K in the README's figures)
     * @param threads compute threads of each engine
     * @param pairs   measured pairs per batch size (at least 1; the README's figures use 5)
     * @param out     where the figures go
     */
    public OffloadDecodeBench(Path model, int threads, int pairs, PrintStream out) {
        if (pairs < 1) {
            throw new IllegalArgumentException("pairs must be at least 1: " + pairs);
        }
        this.model = model;
        this.threads = threads;
        this.pairs = pairs;
        this.out = out;
    }

    /** Warms the store path, then prints one line per batch size (1 and 32). */
    public void run() {
        out.println("== decode with offloading (decode blocks stored too) vs without, " + model.getFileName()
                + ", " + Plural.count(ComputePool.threads(threads), "compute thread") + " each (CPU per token counts the engine thread, which is one"
                + " of them, and the transfer threads, not the compute pool's other threads; the per-block times are wall"
                + " time): twin engines in one process taking turns of " + Plural.count(STEPS_PER_TURN, "step")
                + ", same requests and tokens; on: host tier full, slots reused; the store path"
                + " JIT-compiled first (" + STORE_PATH_WARM_CHUNKS + " chunk stores); on/off 1.0 means offloading costs"
                + " nothing, 0.99 that it costs 1% (the target: at least 0.99) ==");
        warmStorePath(model, threads);
        for (int batch : new int[] {1, 32}) {
            print(batch, compare(batch));
        }
    }

    static OffloadSetup onSetup(int tierChunks) {
        return new OffloadSetup(0, tierChunks, "lru", OffloadConfig.DEFAULT.withOffloadPromptOnly(false));
    }

    /** Chunks of the "on" engine's host tier for waves of {@code batch}: twice its device pool. */
    static int tierChunks(Path model, int batch) {
        try (Model cp = Models.load(model)) {
            return 2 * TwinDecode.deviceBlocks(cp, batch);
        }
    }

    /** {@link #STORE_PATH_WARM_CHUNKS} chunk stores in waves of 32 requests, on a twin of their own. */
    static void warmStorePath(Path model, int threads) {
        try (TwinDecode twin = new TwinDecode(model, threads, 32, onSetup(tierChunks(model, 32)), STEPS_PER_TURN)) {
            while (twin.chunksStored() < STORE_PATH_WARM_CHUNKS) {
                runStoring(twin, 0, "warming the store path");
            }
        }
    }

    /** One run of {@code twin} that must store: never a hang on a tier that takes nothing. */
    private static void runStoring(TwinDecode twin, long nanos, String when) {
        long stored = twin.chunksStored();
        twin.run(nanos, new TwinDecode.Cost(), new TwinDecode.Cost());
        if (twin.chunksStored() == stored) {
            throw new IllegalStateException("bench offload: the engine with offloading stored no chunk in a wave while "
                    + when + " (" + stored + " stored)");
        }
    }

    /** The per-pair costs of both sides at {@code batch} requests per wave. */
    Pairs compare(int batch) {
        int tierChunks = tierChunks(model, batch);
        Pairs p = new Pairs(pairs);
        try (TwinDecode twin = new TwinDecode(model, threads, batch, onSetup(tierChunks), STEPS_PER_TURN)) {
            long until = System.nanoTime() + WARM_NANOS;
            while (System.nanoTime() < until || twin.chunksStored() <= tierChunks) {
                runStoring(twin, 0, "filling the host tier");
            }
            for (int i = 0; i < pairs; i++) {
                p.off[i] = new TwinDecode.Cost();
                p.on[i] = new TwinDecode.Cost();
                twin.run(PAIR_NANOS, p.off[i], p.on[i]);
            }
        }
        return p;
    }

    /** Each pair's cost on both sides. */
    static final class Pairs {
        final TwinDecode.Cost[] off;
        final TwinDecode.Cost[] on;

        Pairs(int n) {
            off = new TwinDecode.Cost[n];
            on = new TwinDecode.Cost[n];
        }

        /** on/off throughput by CPU time of each pair: off's CPU per token over on's. */
        double[] cpuRatios() {
            double[] r = new double[off.length];
            for (int i = 0; i < r.length; i++) {
                r[i] = off[i].cpuPerToken() / on[i].cpuPerToken();
            }
            return r;
        }

        /** on/off throughput by wall time of each pair. */
        double[] wallRatios() {
            double[] r = new double[off.length];
            for (int i = 0; i < r.length; i++) {
                r[i] = off[i].wallPerToken() / on[i].wallPerToken();
            }
            return r;
        }

        TwinDecode.Cost total(TwinDecode.Cost[] side) {
            TwinDecode.Cost t = new TwinDecode.Cost();
            Arrays.stream(side).forEach(t::add);
            return t;
        }
    }

    private void print(int batch, Pairs p) {
        double[] cpu = p.cpuRatios();
        double[] wall = p.wallRatios();
        TwinDecode.Cost off = p.total(p.off);
        TwinDecode.Cost on = p.total(p.on);
        out.printf(Locale.ROOT, "%s: on/off throughput by CPU per token %.4f (range %.4f-%.4f, %s), by wall %.4f (range %.4f-%.4f);"
                        + " CPU per token off %.2f us, on %.2f us (of it on transfer threads %.2f us: a step's store job of up to 1 MiB is copied on the"
                        + " engine thread); wall per token in the forward pass off %.2f us,"
                        + " on %.2f us, around it off %.2f us, on %.2f us; on's offloading per stored block (%,d blocks):"
                        + " deciding %.2f us, copying %.2f us, completing %.2f us, together %.2f us a token; off %,.0f tokens/s wall;"
                        + " engine thread allocates %,.0f B per token off, %,.0f B on%n",
                Plural.count(batch, "sequence"), Samples.median(cpu), min(cpu), max(cpu), Plural.count(cpu.length, "pair"), Samples.median(wall), min(wall), max(wall),
                off.cpuPerToken() / 1e3, on.cpuPerToken() / 1e3, on.transferCpu / 1e3 / on.tokens,
                off.forwardPerToken() / 1e3, on.forwardPerToken() / 1e3, (off.wallPerToken() - off.forwardPerToken()) / 1e3,
                (on.wallPerToken() - on.forwardPerToken()) / 1e3, on.storedBlocks, on.perBlock(on.decideNanos) / 1e3,
                on.perBlock(on.copyNanos) / 1e3, on.perBlock(on.completeNanos) / 1e3,
                (double) (on.decideNanos + on.copyNanos + on.completeNanos) / on.tokens / 1e3, 1e9 / off.wallPerToken(),
                off.bytesPerToken(), on.bytesPerToken());
    }

    private static double min(double[] v) {
        return Arrays.stream(v).min().orElse(Double.NaN);
    }

    private static double max(double[] v) {
        return Arrays.stream(v).max().orElse(Double.NaN);
    }
}

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
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Two engines of one model in one process, "off" (no offloading) and "on", fed the same waves of
 * requests (same ids, prompts, greedy sampling: the same tokens at the same positions, checked) and
 * stepped in turns of a few steps (off-on, on-off, ...: the order flips every turn), each turn
 * measured in the engine thread's CPU time, its allocation and wall time. The two sides run the
 * same compiled code within a fraction of a millisecond of each other, so the machine's load,
 * clock and caches are nearly the same for both, where two separate runs of the same command
 * differ by 13%. Over a pair's whole waves both sides did the same steps, "on" with its stores.
 *
 * <p>Not thread-safe: one thread (the caller, which is both engines' engine thread) uses it.
 */
final class TwinDecode implements AutoCloseable {

    /** Tokens per KV block (and per chunk): a decoding request stores once every 16 steps. */
    static final int BLOCK_SIZE = 16;

    /** Distinct first and second prompt tokens: 400 x 400 prompts before one repeats (no prefix hit). */
    private static final int PROMPT_SPAN = 400;

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    /** What one side spent over some segments. All sums; {@link #add} merges. */
    static final class Cost {
        /** The engine thread's CPU time, ns: every step's work, inline stores included. */
        long engineCpu;
        /** CPU time of the transfer threads (stores too large to run inline), ns; 0 for "off". */
        long transferCpu;
        /** Bytes the engine thread allocated. */
        long allocated;
        /** Wall time, ns. */
        long wall;
        /** Wall time of the forward passes, ns: the same work on both sides (the rest is the step around them). */
        long forward;
        /** Tokens generated. */
        long tokens;
        /** "on" only: blocks its completed stores wrote to the host tier. */
        long storedBlocks;
        /** "on" only: engine-thread ns of its commits that had chunks to store ({@code OffloadStats.storeDecisionNanos}). */
        long decideNanos;
        /** "on" only: the store jobs' own copy time, ns, on whichever thread ran them. */
        long copyNanos;
        /** "on" only: engine-thread ns applying completed jobs ({@code OffloadStats.completionNanos}). */
        long completeNanos;

        void add(Cost c) {
            engineCpu += c.engineCpu;
            transferCpu += c.transferCpu;
            allocated += c.allocated;
            wall += c.wall;
            forward += c.forward;
            tokens += c.tokens;
            storedBlocks += c.storedBlocks;
            decideNanos += c.decideNanos;
            copyNanos += c.copyNanos;
            completeNanos += c.completeNanos;
        }

        /** The "on" engine's counters so far, as a cost (subtract two to get an interval's). */
        static Cost offloadTotals(io.kvtier.offload.OffloadStats s) {
            Cost c = new Cost();
            c.storedBlocks = s.blocksStored().getOrDefault(io.kvtier.tier.HostTier.NAME, 0L);
            c.decideNanos = s.storeDecisionNanos();
            c.copyNanos = s.stores().getOrDefault(io.kvtier.tier.HostTier.NAME, new io.kvtier.offload.OffloadStats.Transfers(0, 0, 0)).nanos();
            c.completeNanos = s.completionNanos();
            return c;
        }

        /** Adds {@code later}'s offloading counters minus {@code earlier}'s. */
        void addOffload(Cost earlier, Cost later) {
            storedBlocks += later.storedBlocks - earlier.storedBlocks;
            decideNanos += later.decideNanos - earlier.decideNanos;
            copyNanos += later.copyNanos - earlier.copyNanos;
            completeNanos += later.completeNanos - earlier.completeNanos;
        }

        /** ns per stored block of {@code nanos} (NaN when none was stored). */
        double perBlock(long nanos) {
            return storedBlocks == 0 ? Double.NaN : (double) nanos / storedBlocks;
        }

        /** CPU ns per generated token: the engine thread's and the transfer threads'. */
        double cpuPerToken() {
            return (double) (engineCpu + transferCpu) / tokens;
        }

        double wallPerToken() {
            return (double) wall / tokens;
        }

        /** Wall ns per token in forward passes, and around them. */
        double forwardPerToken() {
            return (double) forward / tokens;
        }

        double bytesPerToken() {
            return (double) allocated / tokens;
        }
    }

    private final Engine off;
    private final Engine on;
    private final int batch;
    private final int steps;
    private long nextId;
    private final int stepsPerTurn;
    private long turns;

    /**
     * @param model   checkpoint file, loaded once: both engines read the same weights
     * @param threads compute threads of each engine
     * @param batch   requests per wave (1 or 32 in {@code bench offload})
     * @param onSetup the "on" engine's offloading
     * @param stepsPerTurn steps of one engine before the other's turn (a turn should last ~1 ms or less:
     *                the load of a shared machine changes within milliseconds)
     */
    TwinDecode(Path model, int threads, int batch, OffloadSetup onSetup, int stepsPerTurn) {
        this.batch = batch;
        this.stepsPerTurn = stepsPerTurn;
        // One copy of the weights for both: with a copy each, two engines doing the same work
        // differed by a fixed -1.5% to +4.8% in one process and another in the next
        // (TwinDecodeControl, both sides off, 5 processes: run medians 0.985-1.048), which decided
        // bench offload's figure more than offloading did; with one copy, 0.992-1.011 at 1 sequence (1 or 2
        // threads) and 0.990-1.013 at 32.
        Model weights = Models.load(model);
        this.steps = Math.min(256, weights.config().seqLen() - 2);
        try {
            this.off = LlamaRunner.engine(new Borrowed(weights), config(weights, batch), Kernels.best(), threads, OffloadSetup.OFF);
        } catch (RuntimeException e) {
            weights.close();
            throw e;
        }
        try {
            this.on = LlamaRunner.engine(weights, config(weights, batch), Kernels.best(), threads, onSetup);
        } catch (RuntimeException e) {
            off.close(); // the weights: engine() closes what it was given when it fails
            throw e;
        }
    }

    /**
     * The weights of a model whose owner closes it: the "off" engine's view, so that only the "on"
     * engine (the owner, closed last) closes them.
     */
    private record Borrowed(Model model) implements Model {
        @Override public io.kvtier.model.ModelConfig config() { return model.config(); }
        @Override public io.kvtier.model.ArchSpec spec() { return model.spec(); }
        @Override public Path path() { return model.path(); }
        @Override public String modelId() { return model.modelId(); }
        @Override public io.kvtier.model.tensor.Weight tokenEmbedding() { return model.tokenEmbedding(); }
        @Override public io.kvtier.model.tensor.Weight matrix(Matrix m, int layer) { return model.matrix(m, layer); }
        @Override public java.lang.foreign.MemorySegment bias(Matrix m, int layer) { return model.bias(m, layer); }
        @Override public java.lang.foreign.MemorySegment norm(Norm n, int layer) { return model.norm(n, layer); }
        @Override public java.lang.foreign.MemorySegment outputNorm() { return model.outputNorm(); }
        @Override public io.kvtier.model.tensor.Weight classifier() { return model.classifier(); }
        @Override public void close() {
            // the owner's to close
        }
    }

    /** Device blocks for a wave of {@code batch} full contexts and one spare. */
    static int deviceBlocks(Model cp, int batch) {
        return (batch + 1) * cp.config().kvLayout(BLOCK_SIZE).blocksFor(cp.config().seqLen());
    }

    private static EngineConfig config(Model cp, int batch) {
        return new EngineConfig(BLOCK_SIZE, deviceBlocks(cp, batch), 4096, Math.max(batch, 1), false, -1);
    }

    /**
     * Runs waves until each side has {@code minNanos} of measured decode, adding each side's cost
     * to {@code offCost} and {@code onCost}.
     *
     * @throws IllegalStateException if the two sides generated different tokens
     */
    void run(long minNanos, Cost offCost, Cost onCost) {
        Cost a = new Cost();
        Cost b = new Cost();
        long transfer0 = transferCpu();
        Cost offload0 = Cost.offloadTotals(on.offload().stats());
        do {
            wave(a, b);
        } while (a.wall < minNanos || b.wall < minNanos);
        b.transferCpu = transferCpu() - transfer0;
        b.addOffload(offload0, Cost.offloadTotals(on.offload().stats()));
        offCost.add(a);
        onCost.add(b);
    }

    /** One wave of {@code batch} requests on both engines, to the end, the stores drained. */
    private void wave(Cost a, Cost b) {
        long first = nextId;
        nextId += batch;
        List<Request> offReqs = submit(off, first);
        List<Request> onReqs = submit(on, first);
        off.step(); // the prefills: not decode, not measured
        on.step();
        while (off.hasWork() || on.hasWork()) {
            // The order flips every turn: neither side always follows the other's cache footprint.
            if ((turns++ & 1) == 0) {
                turn(off, a);
                turn(on, b);
            } else {
                turn(on, b);
                turn(off, a);
            }
        }
        long t0 = System.nanoTime();
        long c0 = THREADS.getCurrentThreadCpuTime();
        on.drainTransfers(); // the stores still in flight are part of "on"'s cost
        b.engineCpu += THREADS.getCurrentThreadCpuTime() - c0;
        b.wall += System.nanoTime() - t0;
        for (int i = 0; i < batch; i++) {
            if (!Arrays.equals(offReqs.get(i).outputIds(), onReqs.get(i).outputIds())) {
                throw new IllegalStateException("bench offload: request " + offReqs.get(i).id()
                        + " generated different tokens with offloading on and off");
            }
        }
    }

    private List<Request> submit(Engine e, long first) {
        List<Request> reqs = new ArrayList<>(batch);
        for (int i = 0; i < batch; i++) {
            long id = first + i;
            int[] prompt = {1 + (int) (id % PROMPT_SPAN), 1 + (int) (id / PROMPT_SPAN % PROMPT_SPAN)};
            Request r = new Request(id, prompt, steps, SamplingParams.GREEDY, ExtraKeys.NONE);
            e.submit(r);
            reqs.add(r);
        }
        return reqs;
    }

    /** Up to {@link #stepsPerTurn} steps of {@code e}, measured into {@code c}. */
    private void turn(Engine e, Cost c) {
        long before = e.stats().generatedTokens();
        long f0 = e.stats().forwardNanos();
        long alloc0 = THREADS.getCurrentThreadAllocatedBytes();
        long c0 = THREADS.getCurrentThreadCpuTime();
        long t0 = System.nanoTime();
        for (int i = 0; i < stepsPerTurn && e.hasWork(); i++) {
            e.advance();
        }
        c.wall += System.nanoTime() - t0;
        c.engineCpu += THREADS.getCurrentThreadCpuTime() - c0;
        c.allocated += THREADS.getCurrentThreadAllocatedBytes() - alloc0;
        c.tokens += e.stats().generatedTokens() - before;
        c.forward += e.stats().forwardNanos() - f0;
    }

    /** CPU time of the live transfer threads, ns: only the "on" engine has any. */
    private static long transferCpu() {
        long sum = 0;
        for (java.lang.management.ThreadInfo t : THREADS.getThreadInfo(THREADS.getAllThreadIds())) {
            if (t != null && t.getThreadName().startsWith("kvtier-transfer")) {
                sum += Math.max(0, THREADS.getThreadCpuTime(t.getThreadId()));
            }
        }
        return sum;
    }

    /** Chunks the "on" engine has stored in its host tier so far. */
    long chunksStored() {
        return on.offload().stats().blocksStored().getOrDefault("host", 0L);
    }

    @Override
    public void close() {
        try {
            off.close();
        } finally {
            on.close();
        }
    }
}

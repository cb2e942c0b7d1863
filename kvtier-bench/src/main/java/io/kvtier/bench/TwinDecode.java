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
 * stepped in alternating segments of {@link #SEGMENT_STEPS} steps (off-on, on-off, ...), each
 * segment measured in the engine thread's CPU time, its allocation and wall time. The two sides
 * run the same compiled code within a millisecond of each other, so the machine's load, clock and
 * caches are nearly the same for both: their ratio is steady to well under 1% where two separate
 * runs of the same command differ by 13%.
 *
 * <p>A segment is one KV block of steps: at every segment each decoding request crosses exactly one
 * block end, so each "on" segment holds the same store work. Not thread-safe: one thread (the
 * caller, which is both engines' engine thread) uses it.
 */
final class TwinDecode implements AutoCloseable {

    /** Steps per measured segment: one block of 16 tokens, so every segment stores alike. */
    static final int SEGMENT_STEPS = 16;

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
        /** Tokens generated. */
        long tokens;

        void add(Cost c) {
            engineCpu += c.engineCpu;
            transferCpu += c.transferCpu;
            allocated += c.allocated;
            wall += c.wall;
            tokens += c.tokens;
        }

        /** CPU ns per generated token: the engine thread's and the transfer threads'. */
        double cpuPerToken() {
            return (double) (engineCpu + transferCpu) / tokens;
        }

        double wallPerToken() {
            return (double) wall / tokens;
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
    private long segments;

    /**
     * @param model   checkpoint file; each engine loads its own copy (a memory-mapped file: the same pages)
     * @param threads compute threads of each engine
     * @param batch   requests per wave (1 or 32 in {@code bench offload})
     * @param onSetup the "on" engine's offloading
     */
    TwinDecode(Path model, int threads, int batch, OffloadSetup onSetup) {
        this.batch = batch;
        Model a = Models.load(model);
        this.steps = Math.min(256, a.config().seqLen() - 2);
        this.off = LlamaRunner.engine(a, config(a, batch), Kernels.best(), threads, OffloadSetup.OFF);
        Model b = Models.load(model);
        try {
            this.on = LlamaRunner.engine(b, config(b, batch), Kernels.best(), threads, onSetup);
        } catch (RuntimeException e) {
            off.close();
            throw e;
        }
    }

    /** Device blocks for a wave of {@code batch} full contexts and one spare. */
    static int deviceBlocks(Model cp, int batch) {
        return (batch + 1) * cp.config().kvLayout(SEGMENT_STEPS).blocksFor(cp.config().seqLen());
    }

    private static EngineConfig config(Model cp, int batch) {
        return new EngineConfig(SEGMENT_STEPS, deviceBlocks(cp, batch), 4096, Math.max(batch, 1), false, -1);
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
        do {
            wave(a, b);
        } while (a.wall < minNanos || b.wall < minNanos);
        b.transferCpu = transferCpu() - transfer0;
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
            // The order flips every segment: neither side always follows the other's cache footprint.
            if ((segments++ & 1) == 0) {
                segment(off, a);
                segment(on, b);
            } else {
                segment(on, b);
                segment(off, a);
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

    /** Up to {@link #SEGMENT_STEPS} steps of {@code e}, measured into {@code c}. */
    private static void segment(Engine e, Cost c) {
        long before = e.stats().generatedTokens();
        long alloc0 = THREADS.getCurrentThreadAllocatedBytes();
        long c0 = THREADS.getCurrentThreadCpuTime();
        long t0 = System.nanoTime();
        for (int i = 0; i < SEGMENT_STEPS && e.hasWork(); i++) {
            e.advance();
        }
        c.wall += System.nanoTime() - t0;
        c.engineCpu += THREADS.getCurrentThreadCpuTime() - c0;
        c.allocated += THREADS.getCurrentThreadAllocatedBytes() - alloc0;
        c.tokens += e.stats().generatedTokens() - before;
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

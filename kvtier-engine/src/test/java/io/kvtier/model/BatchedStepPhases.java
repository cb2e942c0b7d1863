package io.kvtier.model;

import static io.kvtier.model.BatchedDecodeComparison.max;
import static io.kvtier.model.BatchedDecodeComparison.median;
import static io.kvtier.model.BatchedDecodeComparison.min;

import io.kvtier.engine.Engine;
import io.kvtier.engine.EngineConfig;
import io.kvtier.engine.LlamaRunner;
import io.kvtier.engine.Request;
import io.kvtier.engine.Sampler;
import io.kvtier.engine.SamplingParams;
import io.kvtier.kv.ExtraKeys;
import io.kvtier.kv.KvLayout;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ForkJoinPool;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Benchmark (not a test): where the CPU time of a 32-sequence decode step goes, phase by phase,
 * on one thread, in one JVM (issue 16: 32-sequence decode at least 8x single). Each round times,
 * in the thread's CPU time (wall time on this shared machine measures the other jobs):
 * <ol>
 *   <li>{@code engine}: {@link Engine#advance()} of 32 greedy requests at positions
 *       {@code P..P+STEPS-1} (scheduling, the forward pass, sampling, bookkeeping; offload off);</li>
 *   <li>{@code forward}: {@link Transformer#forward} of the same batch shape on a slab prefilled to
 *       {@code P}, with the kernels as {@link Kernels#best()};</li>
 *   <li>the same forward pass through a decorator of those kernels that times every
 *       {@link Kernels#matmulPacked} call by matrix shape and every {@link Kernels#packRows};</li>
 *   <li>attention alone: {@link PagedAttention#writeKv} and {@link PagedAttention#attend} of every
 *       token and layer as the forward pass calls them (all heads of a token per call), with the
 *       kernels' block attention ({@link VectorAttention}) and, for the before, slot by slot;</li>
 *   <li>the same attention with each of its three parts timed ({@link AttentionParts}: scores,
 *       softmax, weighted sums), and a pass that only reads every K and V row the step's attention
 *       reads, in its order (the memory pattern's own time: blocks of {@code 16 * kvDim} floats
 *       scattered over the slab);</li>
 *   <li>greedy sampling alone: {@link Sampler#argmax} of the 32 logit rows.</li>
 * </ol>
 * The rest of the forward pass (embedding, norms, RoPE, SwiGLU, residual adds, logit copies) is
 * {@code forward - products - packing - attention}; the engine's own cost is {@code engine - forward}.
 * Run with the engine's test classpath:
 * <pre>
 * java --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED \
 *      -cp kvtier-core/target/classes:kvtier-engine/target/classes:kvtier-engine/target/test-classes:kvtier-cli/target/kvtier.jar \
 *      io.kvtier.model.BatchedStepPhases /work/m/15m.bin [rounds] [position]
 * </pre>
 * {@code -DblockSize=N} sets the slab's block size for the forward and attention phases (default 16;
 * the engine phase keeps 16).
 */
public final class BatchedStepPhases {

    static final int SEQUENCES = 32, STEPS = 8;
    private static final ThreadMXBean CPU = ManagementFactory.getThreadMXBean();

    private BatchedStepPhases() {
    }

    public static void main(String[] args) {
        Path path = Path.of(args[0]);
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 7;
        int position = args.length > 2 ? Integer.parseInt(args[2]) : 128;
        ForkJoinPool one = new ForkJoinPool(1);
        TimedKernels timed = new TimedKernels(Kernels.best());
        try (Checkpoint m = Checkpoint.load(path);
             Transformer plain = new Transformer(m, Kernels.best(), new Parallel(one));
             Transformer probed = new Transformer(m, timed, new Parallel(one));
             Engine engine = LlamaRunner.engine(Checkpoint.load(path), engineConfig(m.config(), position), Kernels.best(), 1);
             Arena arena = Arena.ofShared()) {
            ModelConfig c = m.config();
            KvLayout layout = c.kvLayout(Integer.getInteger("blockSize", 16));
            int blocksPerSeq = layout.blocksFor(position + STEPS + 1);
            MemorySegment slab = arena.allocate(layout.bytesPerBlock() * blocksPerSeq * SEQUENCES, 64);
            int[][] tables = prefill(plain, blocksPerSeq, position, slab, layout);
            Attention att = new Attention(c, Kernels.best(), tables, slab, layout, position);
            Attention rowByRow = new Attention(c, new SlotRows(Kernels.best()), tables, slab, layout, position);
            AttentionParts parts = new AttentionParts(Kernels.best());
            Attention partsAtt = new Attention(c, parts, tables, slab, layout, position);
            Map<String, double[]> perStep = new TreeMap<>();   // phase -> per round, ms of CPU per step
            long[] ids = {0};
            for (int r = -2; r < rounds; r++) {                  // 2 warm-up rounds
                double engineMs = engineSteps(engine, ids, c, position) / 1e6 / STEPS;
                long t0 = cpu();
                float[][] logits = null;
                for (int step = 0; step < STEPS; step++) {
                    logits = plain.forward(batch(c, tables, position, step), slab, layout);
                }
                double forwardMs = (cpu() - t0) / 1e6 / STEPS;
                timed.reset();
                for (int step = 0; step < STEPS; step++) {
                    probed.forward(batch(c, tables, position, step), slab, layout);
                }
                long a0 = cpu();
                for (int step = 0; step < STEPS; step++) {
                    att.step(step);
                }
                double attentionMs = (cpu() - a0) / 1e6 / STEPS;
                long b0 = cpu();
                for (int step = 0; step < STEPS; step++) {
                    rowByRow.step(step);
                }
                double rowByRowMs = (cpu() - b0) / 1e6 / STEPS;
                long r0 = cpu();
                float readSink = 0;
                for (int step = 0; step < STEPS; step++) {
                    readSink += att.readPass(step);
                }
                double readMs = (cpu() - r0) / 1e6 / STEPS;
                if (readSink == Float.MIN_VALUE) {
                    System.out.print("");
                }
                long s0 = cpu();
                int sink = 0;
                for (int step = 0; step < STEPS; step++) {
                    for (float[] row : logits) {
                        sink += Sampler.argmax(row);
                    }
                }
                double argmaxMs = (cpu() - s0) / 1e6 / STEPS;
                if (sink == Integer.MIN_VALUE) {
                    System.out.print("");
                }
                if (r < 0) {
                    continue;
                }
                put(perStep, "a engine step", r, rounds, engineMs);
                put(perStep, "b forward", r, rounds, forwardMs);
                double products = 0;
                for (Map.Entry<String, long[]> e : timed.byShape.entrySet()) {
                    double ms = e.getValue()[0] / 1e6 / STEPS;
                    products += ms;
                    put(perStep, "c product " + e.getKey(), r, rounds, ms);
                }
                double packMs = timed.packNanos / 1e6 / STEPS;
                put(perStep, "d packRows", r, rounds, packMs);
                put(perStep, "e attention (writeKv + attend)", r, rounds, attentionMs);
                put(perStep, "e1 attention slot by slot (before)", r, rounds, rowByRowMs);
                put(perStep, "e2 attention now / before (ratio)", r, rounds, attentionMs / rowByRowMs);
                put(perStep, "e3 KV read pass alone", r, rounds, readMs);
                Arrays.fill(parts.nanos, 0);
                for (int step = 0; step < STEPS; step++) {
                    partsAtt.step(step);
                }
                put(perStep, "e4 scores", r, rounds, parts.nanos[0] / 1e6 / STEPS);
                put(perStep, "e5 softmax", r, rounds, parts.nanos[1] / 1e6 / STEPS);
                put(perStep, "e6 weighted sums", r, rounds, parts.nanos[2] / 1e6 / STEPS);
                put(perStep, "f rest of forward", r, rounds, forwardMs - products - packMs - attentionMs);
                put(perStep, "g engine - forward", r, rounds, engineMs - forwardMs);
                put(perStep, "h argmax of 32 rows", r, rounds, argmaxMs);
            }
            System.out.printf(Locale.ROOT, "%s, %d sequences at positions %d-%d, 1 thread, kernels %s; ms of CPU per step, median of %d rounds (min-max)%n",
                    path.getFileName(), SEQUENCES, position, position + STEPS - 1, Kernels.best().name(), rounds);
            for (Map.Entry<String, double[]> e : perStep.entrySet()) {
                double[] v = e.getValue();
                String rate = "";
                long[] shape = timed.byShape.get(e.getKey().replace("c product ", ""));
                if (shape != null) {
                    rate = String.format(Locale.ROOT, "  %.1f multiply-adds/ns", shape[1] / (double) STEPS / (median(v) * 1e6));
                }
                System.out.printf(Locale.ROOT, "  %-34s %7.2f (%.2f-%.2f)%s%n", e.getKey().substring(e.getKey().indexOf(' ') + 1), median(v), min(v), max(v), rate);
            }
            System.out.printf(Locale.ROOT, "  engine step = %.0f tokens/s per CPU second%n", SEQUENCES / (median(perStep.get("a engine step")) / 1e3));
        } finally {
            one.shutdownNow();
        }
    }

    private static long cpu() {
        return CPU.getCurrentThreadCpuTime();
    }

    private static void put(Map<String, double[]> m, String key, int r, int rounds, double v) {
        m.computeIfAbsent(key, k -> new double[rounds])[r] = v;
    }

    private static EngineConfig engineConfig(ModelConfig c, int position) {
        int blocks = (SEQUENCES + 1) * c.kvLayout(16).blocksFor(position + STEPS + 2);
        return new EngineConfig(16, blocks, 4096, SEQUENCES, false, -1);
    }

    /**
     * CPU nanoseconds of {@code STEPS} engine steps of 32 greedy requests at positions
     * {@code position..}: the requests are submitted with 1-token prompts and advanced (untimed) to
     * {@code position} first, and run to their end after.
     */
    private static long engineSteps(Engine engine, long[] ids, ModelConfig c, int position) {
        for (int i = 0; i < SEQUENCES; i++) {
            engine.submit(new Request(ids[0]++, new int[] {1 + i}, position + STEPS + 1, SamplingParams.GREEDY, ExtraKeys.NONE));
        }
        engine.step();                          // position 0
        for (int p = 1; p < position; p++) {
            engine.advance();
        }
        long t0 = cpu();
        for (int step = 0; step < STEPS; step++) {
            engine.advance();
        }
        long t = cpu() - t0;
        while (engine.hasWork()) {
            engine.advance();
        }
        return t;
    }

    /**
     * Block tables of {@link #SEQUENCES} sequences, sequence {@code s} in slab blocks
     * {@code [s * blocksPerSeq, (s + 1) * blocksPerSeq)}, each prefilled through {@code t} with
     * a prompt of {@code position} tokens of its own.
     */
    static int[][] prefill(Transformer t, int blocksPerSeq, int position, MemorySegment slab, KvLayout layout) {
        int[][] tables = new int[SEQUENCES][blocksPerSeq];
        for (int s = 0; s < SEQUENCES; s++) {
            for (int b = 0; b < blocksPerSeq; b++) {
                tables[s][b] = s * blocksPerSeq + b;
            }
            t.forward(List.of(new SequenceChunk(prompt(s, position), 0, tables[s], false)), slab, layout);
        }
        return tables;
    }

    /** One decode token per sequence at position {@code position + step}, over the prefilled tables. */
    static List<SequenceChunk> batch(ModelConfig c, int[][] tables, int position, int step) {
        List<SequenceChunk> batch = new ArrayList<>(SEQUENCES);
        for (int s = 0; s < SEQUENCES; s++) {
            batch.add(new SequenceChunk(new int[] {(s * 31 + step * 7) % c.vocabSize()}, position + step, tables[s], true));
        }
        return batch;
    }

    private static int[] prompt(int s, int length) {
        int[] p = new int[length];
        for (int i = 0; i < length; i++) {
            p[i] = 1 + (s * 131 + i * 17) % 1000;
        }
        return p;
    }

    /** The attention of a decode step alone: every layer's K/V writes and every token's attention, over the prefilled slab. */
    private static final class Attention {
        private final ModelConfig c;
        private final PagedAttention attention;
        private final Activations a;
        private final List<SequenceChunk> chunks = new ArrayList<>();
        private final MemorySegment slab;
        private final KvLayout layout;
        private final int position;

        Attention(ModelConfig c, Kernels kernels, int[][] tables, MemorySegment slab, KvLayout layout, int position) {
            this.c = c;
            this.attention = new PagedAttention(c, kernels);
            this.a = new Activations(c, 1);
            this.slab = slab;
            this.layout = layout;
            this.position = position;
            a.ensureTokens(SEQUENCES);
            SplittableRandom rng = new SplittableRandom(16);
            for (int i = 0; i < SEQUENCES * c.qDim(); i++) {
                a.q[i] = (float) rng.nextGaussian();
            }
            for (int i = 0; i < SEQUENCES * c.kvDim(); i++) {
                a.k[i] = (float) rng.nextGaussian();
                a.v[i] = (float) rng.nextGaussian();
            }
            for (int s = 0; s < SEQUENCES; s++) {
                chunks.add(new SequenceChunk(new int[] {1}, position, tables[s], true));
                a.chunk[s] = s;
            }
        }

        /** Reads every K and V row the step's attention reads, in its order, with 4 vector sums: the pattern's own speed. */
        float readPass(int step) {
            VectorSpecies<Float> sp = FloatVector.SPECIES_PREFERRED;
            FloatVector s0 = FloatVector.zero(sp), s1 = s0, s2 = s0, s3 = s0;
            int p = position + step;
            int bs = layout.blockSize();
            long slotBytes = (long) c.kvDim() * Float.BYTES;
            int w = sp.length() * Float.BYTES;
            for (int l = 0; l < c.layers(); l++) {
                for (int t = 0; t < SEQUENCES; t++) {
                    int[] table = chunks.get(t).blockTables()[0];
                    for (int kv = 0; kv < 2; kv++) {
                        long off = layout.byteOffset(l, kv, 0);
                        for (int s = 0; s <= p; s += bs) {
                            long row = table[s / bs] * layout.bytesPerBlock() + off;
                            long end = row + Math.min(bs, p + 1 - s) * slotBytes;
                            long at = row;
                            for (; at + 4L * w <= end; at += 4L * w) {
                                s0 = s0.add(FloatVector.fromMemorySegment(sp, slab, at, ByteOrder.LITTLE_ENDIAN));
                                s1 = s1.add(FloatVector.fromMemorySegment(sp, slab, at + w, ByteOrder.LITTLE_ENDIAN));
                                s2 = s2.add(FloatVector.fromMemorySegment(sp, slab, at + 2L * w, ByteOrder.LITTLE_ENDIAN));
                                s3 = s3.add(FloatVector.fromMemorySegment(sp, slab, at + 3L * w, ByteOrder.LITTLE_ENDIAN));
                            }
                        }
                    }
                }
            }
            return s0.add(s1).add(s2).add(s3).reduceLanes(VectorOperators.ADD);
        }

        void step(int step) {
            Arrays.fill(a.pos, 0, SEQUENCES, position + step);
            for (int l = 0; l < c.layers(); l++) {
                attention.writeKv(l, 0, SEQUENCES, a, chunks, slab, layout);
                for (int t = 0; t < SEQUENCES; t++) {
                    attention.attend(l, 0, 0, t, 0, c.heads(), a, a.att(0, c.heads() * (position + step + 1)), chunks, slab, layout);
                }
            }
        }
    }

    /** {@link Kernels#best()} with the attention's three parts timed (System.nanoTime: one thread). */
    static final class AttentionParts extends Delegate {
        final long[] nanos = new long[3];

        AttentionParts(Kernels k) {
            super(k);
        }

        @Override
        public void scoresBlock(MemorySegment kk, long rowByteOff, long slotBytes, int count, int hFrom, int hTo, int group,
                                int n, float[] q, int qOff, float scale, float[] scores, int sOff, int sStride) {
            long t0 = System.nanoTime();
            k.scoresBlock(kk, rowByteOff, slotBytes, count, hFrom, hTo, group, n, q, qOff, scale, scores, sOff, sStride);
            nanos[0] += System.nanoTime() - t0;
        }

        @Override
        public void softmax(float[] x, int off, int n) {
            long t0 = System.nanoTime();
            k.softmax(x, off, n);
            nanos[1] += System.nanoTime() - t0;
        }

        @Override
        public void weightedSumBlock(MemorySegment v, long rowByteOff, long slotBytes, int count, int hFrom, int hTo,
                                     int group, int n, float[] w, int wOff, int wStride, float[] y, int yOff) {
            long t0 = System.nanoTime();
            k.weightedSumBlock(v, rowByteOff, slotBytes, count, hFrom, hTo, group, n, w, wOff, wStride, y, yOff);
            nanos[2] += System.nanoTime() - t0;
        }
    }

    /** {@link Kernels#best()} with every batched product timed by shape ({@code out x in}) and every packing timed. */
    private static final class TimedKernels extends Delegate {
        /** "out x in" -> {CPU ns, multiply-adds} since {@link #reset}. */
        final Map<String, long[]> byShape = new TreeMap<>();
        long packNanos;

        TimedKernels(Kernels k) {
            super(k);
        }

        void reset() {
            byShape.values().forEach(v -> Arrays.fill(v, 0));
            packNanos = 0;
        }

        @Override
        public void matmulPacked(MemorySegment w, int in, int out, float[] packed, int n, float[] y, int rowFrom, int rowTo) {
            long t0 = cpu();
            k.matmulPacked(w, in, out, packed, n, y, rowFrom, rowTo);
            long[] v = byShape.computeIfAbsent(String.format(Locale.ROOT, "%5d x %4d", out, in), s -> new long[2]);
            v[0] += cpu() - t0;
            v[1] += (long) (rowTo - rowFrom) * in * n;
        }

        @Override
        public void packRows(float[] x, int n, int in, float[] packed) {
            long t0 = cpu();
            k.packRows(x, n, in, packed);
            packNanos += cpu() - t0;
        }
    }

    /** {@link Kernels#best()} with attention slot by slot ({@link Kernels#scoresRow}, {@link Kernels#weightedSumRow}): the attention before {@link VectorAttention}. */
    private static final class SlotRows extends Delegate {
        SlotRows(Kernels k) {
            super(k);
        }

        @Override
        public void scoresBlock(MemorySegment kk, long rowByteOff, long slotBytes, int count, int hFrom, int hTo, int group,
                                int n, float[] q, int qOff, float scale, float[] scores, int sOff, int sStride) {
            for (int i = 0; i < count; i++) {
                k.scoresRow(kk, rowByteOff + i * slotBytes, hFrom, hTo, group, n, q, qOff, scale, scores, sOff + i, sStride);
            }
        }

        @Override
        public void weightedSumBlock(MemorySegment v, long rowByteOff, long slotBytes, int count, int hFrom, int hTo,
                                     int group, int n, float[] w, int wOff, int wStride, float[] y, int yOff) {
            for (int i = 0; i < count; i++) {
                k.weightedSumRow(v, rowByteOff + i * slotBytes, hFrom, hTo, group, n, w, wOff + i, wStride, y, yOff);
            }
        }
    }

    /** Every kernel of another {@link Kernels}, for decorators that change a few. */
    abstract static class Delegate implements Kernels {
        final Kernels k;

        Delegate(Kernels k) {
            this.k = k;
        }

        @Override public int packedLength(int n, int in) { return k.packedLength(n, in); }
        @Override public void packRows(float[] x, int n, int in, float[] packed) { k.packRows(x, n, in, packed); }
        @Override public void matmulPacked(MemorySegment w, int in, int out, float[] packed, int n, float[] y, int rowFrom, int rowTo) {
            k.matmulPacked(w, in, out, packed, n, y, rowFrom, rowTo);
        }
        @Override public String name() { return k.name(); }
        @Override public float dot(float[] a, int aOff, float[] b, int bOff, int n) { return k.dot(a, aOff, b, bOff, n); }
        @Override public float dot(MemorySegment a, long aByteOff, float[] b, int bOff, int n) { return k.dot(a, aByteOff, b, bOff, n); }
        @Override public void axpy(float alpha, MemorySegment x, long xByteOff, float[] y, int yOff, int n) { k.axpy(alpha, x, xByteOff, y, yOff, n); }
        @Override public void scores(MemorySegment kk, long kByteOff, long strideBytes, int count, float[] q, int qOff, int n, float scale, float[] scores, int sOff) {
            k.scores(kk, kByteOff, strideBytes, count, q, qOff, n, scale, scores, sOff);
        }
        @Override public void weightedSum(MemorySegment v, long vByteOff, long strideBytes, int count, float[] w, int wOff, float[] y, int yOff, int n) {
            k.weightedSum(v, vByteOff, strideBytes, count, w, wOff, y, yOff, n);
        }
        @Override public void scoresRow(MemorySegment kk, long rowByteOff, int hFrom, int hTo, int group, int n, float[] q, int qOff, float scale, float[] scores, int sOff, int sStride) {
            k.scoresRow(kk, rowByteOff, hFrom, hTo, group, n, q, qOff, scale, scores, sOff, sStride);
        }
        @Override public void weightedSumRow(MemorySegment v, long rowByteOff, int hFrom, int hTo, int group, int n, float[] w, int wOff, int wStride, float[] y, int yOff) {
            k.weightedSumRow(v, rowByteOff, hFrom, hTo, group, n, w, wOff, wStride, y, yOff);
        }
        @Override public void scoresBlock(MemorySegment kk, long rowByteOff, long slotBytes, int count, int hFrom, int hTo, int group, int n, float[] q, int qOff, float scale, float[] scores, int sOff, int sStride) {
            k.scoresBlock(kk, rowByteOff, slotBytes, count, hFrom, hTo, group, n, q, qOff, scale, scores, sOff, sStride);
        }
        @Override public void weightedSumBlock(MemorySegment v, long rowByteOff, long slotBytes, int count, int hFrom, int hTo, int group, int n, float[] w, int wOff, int wStride, float[] y, int yOff) {
            k.weightedSumBlock(v, rowByteOff, slotBytes, count, hFrom, hTo, group, n, w, wOff, wStride, y, yOff);
        }
        @Override public void matvec(MemorySegment w, int in, float[] x, int xOff, float[] y, int yOff, int rowFrom, int rowTo) { k.matvec(w, in, x, xOff, y, yOff, rowFrom, rowTo); }
        @Override public void matmul(MemorySegment w, int in, int out, float[] x, int n, float[] y, int rowFrom, int rowTo) { k.matmul(w, in, out, x, n, y, rowFrom, rowTo); }
        @Override public void rmsnorm(float[] out, int outOff, float[] x, int xOff, MemorySegment weight, int n, float eps) { k.rmsnorm(out, outOff, x, xOff, weight, n, eps); }
        @Override public void softmax(float[] x, int off, int n) { k.softmax(x, off, n); }
        @Override public void silu(float[] x, int off, int n) { k.silu(x, off, n); }
        @Override public void swiglu(float[] gate, int gOff, float[] up, int uOff, int n) { k.swiglu(gate, gOff, up, uOff, n); }
        @Override public void add(float[] y, int yOff, float[] x, int xOff, int n) { k.add(y, yOff, x, xOff, n); }
    }
}

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
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ForkJoinPool;

/**
 * Benchmark (not a test): where the CPU time of a single-sequence decode step goes on one
 * thread, against the read pass of the bandwidth bound over the same bytes, in one JVM, in the
 * thread's CPU time (wall time on this shared machine measures the other jobs). Each round:
 * <ol>
 *   <li>{@code read pass}: {@link RowReader#readOnCaller} over a fresh buffer of the weight bytes
 *       of a token, rows of {@code dim} floats, as {@code bench generate}'s bound;</li>
 *   <li>{@code engine}: {@link Engine#advance()} of one greedy request at positions
 *       {@code P..P+STEPS-1};</li>
 *   <li>{@code forward}: {@link Transformer#forward} of one token at the same positions;</li>
 *   <li>the same through a decorator of the kernels that times every product by shape, every
 *       rmsnorm, the attention kernels (scores, softmax, weighted sums) and the element-wise ones;</li>
 *   <li>{@link Sampler#argmax} of the logits;</li>
 *   <li>{@code rows 8}: the forward pass with its single-row products 8 weight rows at a time, one
 *       vector a row per trip ({@link MatvecReadComparison#rows8}) instead of the kernel's 4 rows
 *       with two vectors each, and its largest logit difference from the kernel's.</li>
 * </ol>
 * Each product shape is also given as GB/s of CPU time against the read pass's GB/s of the same
 * round; the step's fraction is {@code read pass / forward} (CPU time for the same bytes).
 * <pre>
 * java --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED \
 *      -cp kvtier-core/target/classes:kvtier-engine/target/classes:kvtier-engine/target/test-classes:kvtier-cli/target/kvtier.jar \
 *      io.kvtier.model.SingleStepPhases /work/m/110m.bin [rounds] [position]
 * </pre>
 */
public final class SingleStepPhases {

    private static final int STEPS = 16;
    private static final ThreadMXBean CPU = ManagementFactory.getThreadMXBean();
    private static float sink;

    private SingleStepPhases() {
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
             Transformer eight = new Transformer(m, new Rows8(Kernels.best()), new Parallel(one));
             Engine engine = LlamaRunner.engine(Checkpoint.load(path), engineConfig(m.config(), position), Kernels.best(), 1);
             Arena arena = Arena.ofShared()) {
            ModelConfig c = m.config();
            plain.reuseLogitArrays();
            probed.reuseLogitArrays();
            eight.reuseLogitArrays();
            long weightBytes = weightBytes(m);
            int rowBytes = c.dim() * Float.BYTES;
            int readRows = (int) ((weightBytes + rowBytes - 1) / rowBytes);
            MemorySegment buffer = arena.allocate((long) readRows * rowBytes, 64);
            buffer.fill((byte) 0x3f);
            KvLayout layout = c.kvLayout(16);
            int[] table = new int[layout.blocksFor(position + STEPS + 1)];
            for (int b = 0; b < table.length; b++) {
                table[b] = b;
            }
            MemorySegment slab = arena.allocate(layout.bytesPerBlock() * table.length, 64);
            int[] prompt = new int[position];
            for (int i = 0; i < position; i++) {
                prompt[i] = 1 + i * 17 % 1000;
            }
            plain.forward(List.of(new SequenceChunk(prompt, 0, table, false)), slab, layout);
            Map<String, double[]> perStep = new TreeMap<>();   // phase -> per round, ms of CPU per step
            double[] readGbps = new double[rounds];
            long[] ids = {0};
            for (int r = -3; r < rounds; r++) {                  // 3 warm-up rounds
                long p0 = cpu();
                sink += RowReader.readOnCaller(buffer, c.dim(), readRows);
                double passMs = (cpu() - p0) / 1e6;
                double engineMs = engineSteps(engine, ids, position) / 1e6 / STEPS;
                long t0 = cpu();
                float[] logits = null;
                for (int step = 0; step < STEPS; step++) {
                    logits = plain.forward(token(c, table, position, step), slab, layout)[0];
                }
                double forwardMs = (cpu() - t0) / 1e6 / STEPS;
                long e0 = cpu();
                float[] logits8 = null;
                for (int step = 0; step < STEPS; step++) {
                    logits8 = eight.forward(token(c, table, position, step), slab, layout)[0];
                }
                double eightMs = (cpu() - e0) / 1e6 / STEPS;
                float diff = 0;
                for (int i = 0; i < logits.length; i++) {
                    diff = Math.max(diff, Math.abs(logits[i] - logits8[i]));
                }
                timed.reset();
                long q0 = cpu();
                for (int step = 0; step < STEPS; step++) {
                    probed.forward(token(c, table, position, step), slab, layout);
                }
                double probedMs = (cpu() - q0) / 1e6 / STEPS;
                long s0 = cpu();
                for (int step = 0; step < STEPS; step++) {
                    sink += Sampler.argmax(logits);
                }
                double argmaxMs = (cpu() - s0) / 1e6 / STEPS;
                if (r < 0) {
                    continue;
                }
                readGbps[r] = weightBytes / passMs / 1e6;
                put(perStep, "a read pass (same bytes)", r, rounds, passMs);
                put(perStep, "b engine step", r, rounds, engineMs);
                put(perStep, "c forward", r, rounds, forwardMs);
                put(perStep, "d forward, timed kernels", r, rounds, probedMs);
                put(perStep, "e fraction: read pass / forward", r, rounds, passMs / forwardMs);
                put(perStep, "f fraction: read pass / engine step", r, rounds, passMs / engineMs);
                double kernels = 0;
                for (Map.Entry<String, long[]> e : timed.byKind.entrySet()) {
                    double ms = e.getValue()[0] / 1e6 / STEPS;
                    kernels += ms;
                    put(perStep, "g " + e.getKey(), r, rounds, ms);
                    if (e.getValue()[1] > 0) {
                        put(perStep, "h GB/s " + e.getKey() + " / read pass", r, rounds,
                                e.getValue()[1] / (double) STEPS / (ms * 1e6) / readGbps[r]);
                    }
                }
                put(perStep, "i rest of timed forward", r, rounds, probedMs - kernels);
                put(perStep, "j argmax", r, rounds, argmaxMs);
                put(perStep, "k forward, rows 8 at a time", r, rounds, eightMs);
                put(perStep, "l forward / forward rows 8", r, rounds, forwardMs / eightMs);
                put(perStep, "m max |logit difference| rows 8", r, rounds, diff);
            }
            System.out.printf(Locale.ROOT, "%s, 1 sequence at positions %d-%d, 1 thread, kernels %s, %.1f MB of weights a token,"
                            + " read pass %.2f GB/s of CPU (median); ms of CPU per step, median of %d rounds (min-max)%n",
                    path.getFileName(), position, position + STEPS - 1, Kernels.best().name(), weightBytes / 1e6,
                    median(readGbps), rounds);
            for (Map.Entry<String, double[]> e : perStep.entrySet()) {
                double[] v = e.getValue();
                System.out.printf(Locale.ROOT, "  %-44s %8.3f (%.3f-%.3f)%n", e.getKey().substring(2), median(v), min(v), max(v));
            }
        } finally {
            one.shutdownNow();
        }
        if (sink == Float.MIN_VALUE) {
            System.out.print("");
        }
    }

    static long weightBytes(Model m) {
        long bytes = m.classifier().data().byteSize();
        for (Model.Matrix x : Model.Matrix.values()) {
            for (int l = 0; l < m.config().layers(); l++) {
                bytes += m.matrix(x, l).data().byteSize();
            }
        }
        return bytes;
    }

    private static long cpu() {
        return CPU.getCurrentThreadCpuTime();
    }

    private static void put(Map<String, double[]> m, String key, int r, int rounds, double v) {
        m.computeIfAbsent(key, k -> new double[rounds])[r] = v;
    }

    private static EngineConfig engineConfig(ModelConfig c, int position) {
        int blocks = 2 * c.kvLayout(16).blocksFor(position + STEPS + 2);
        return new EngineConfig(16, blocks, 4096, 1, false, -1);
    }

    /** CPU ns of {@code STEPS} engine steps of one greedy request at positions {@code position..}, advanced there untimed. */
    private static long engineSteps(Engine engine, long[] ids, int position) {
        engine.submit(new Request(ids[0]++, new int[] {1}, position + STEPS + 1, SamplingParams.GREEDY, ExtraKeys.NONE));
        engine.step();
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

    private static List<SequenceChunk> token(ModelConfig c, int[] table, int position, int step) {
        return List.of(new SequenceChunk(new int[] {(31 + step * 7) % c.vocabSize()}, position + step, table, true));
    }

    /** Single-row products 8 rows at a time, one vector a row per trip ({@link MatvecReadComparison#rows8}), on one thread. */
    private static final class Rows8 extends BatchedStepPhases.Delegate {
        Rows8(Kernels k) {
            super(k);
        }

        @Override
        public void matmulPacked(MemorySegment w, int in, int out, float[] packed, int n, float[] y, int rowFrom, int rowTo) {
            if (n == 1 && rowFrom == 0 && rowTo == out && out % 8 == 0) {   // one thread; every matrix of the stories shapes
                MatvecReadComparison.rows8(w, in, packed, y, out);
            } else {
                k.matmulPacked(w, in, out, packed, n, y, rowFrom, rowTo);
            }
        }
    }

    /** Kernels with every call timed by kind ({@code "out x in"} for products, with their bytes). */
    private static final class TimedKernels extends BatchedStepPhases.Delegate {
        /** kind -> {CPU ns, weight bytes read} since {@link #reset}. */
        final Map<String, long[]> byKind = new TreeMap<>();

        TimedKernels(Kernels k) {
            super(k);
        }

        void reset() {
            byKind.clear();
        }

        private void add(String kind, long t0, long bytes) {
            long[] v = byKind.computeIfAbsent(kind, s -> new long[2]);
            v[0] += cpu() - t0;
            v[1] += bytes;
        }

        @Override
        public void matmulPacked(MemorySegment w, int in, int out, float[] packed, int n, float[] y, int rowFrom, int rowTo) {
            long t0 = cpu();
            k.matmulPacked(w, in, out, packed, n, y, rowFrom, rowTo);
            add(String.format(Locale.ROOT, "product %5d x %4d", out, in), t0, (long) (rowTo - rowFrom) * in * Float.BYTES);
        }

        @Override
        public void packRows(float[] x, int n, int in, float[] packed) {
            long t0 = cpu();
            k.packRows(x, n, in, packed);
            add("packRows", t0, 0);
        }

        @Override
        public void rmsnorm(float[] out, int outOff, float[] x, int xOff, MemorySegment weight, int n, float eps) {
            long t0 = cpu();
            k.rmsnorm(out, outOff, x, xOff, weight, n, eps);
            add("rmsnorm", t0, 0);
        }

        @Override
        public void scoresBlock(MemorySegment kk, long rowByteOff, long slotBytes, int count, int hFrom, int hTo, int group,
                                int n, float[] q, int qOff, float scale, float[] scores, int sOff, int sStride) {
            long t0 = cpu();
            k.scoresBlock(kk, rowByteOff, slotBytes, count, hFrom, hTo, group, n, q, qOff, scale, scores, sOff, sStride);
            add("attention scores", t0, 0);
        }

        @Override
        public void weightedSumBlock(MemorySegment v, long rowByteOff, long slotBytes, int count, int hFrom, int hTo,
                                     int group, int n, float[] w, int wOff, int wStride, float[] y, int yOff) {
            long t0 = cpu();
            k.weightedSumBlock(v, rowByteOff, slotBytes, count, hFrom, hTo, group, n, w, wOff, wStride, y, yOff);
            add("attention weighted sums", t0, 0);
        }

        @Override
        public void softmax(float[] x, int off, int n) {
            long t0 = cpu();
            k.softmax(x, off, n);
            add("attention softmax", t0, 0);
        }

        @Override
        public void swiglu(float[] gate, int gOff, float[] up, int uOff, int n) {
            long t0 = cpu();
            k.swiglu(gate, gOff, up, uOff, n);
            add("swiglu", t0, 0);
        }

        @Override
        public void add(float[] y, int yOff, float[] x, int xOff, int n) {
            long t0 = cpu();
            k.add(y, yOff, x, xOff, n);
            add("residual add", t0, 0);
        }
    }
}

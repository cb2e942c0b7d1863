package io.kvtier.model;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ForkJoinPool;

/**
 * Benchmark (not a test): what single-sequence decode spends outside streaming weights, in CPU
 * time, so that a loaded machine's waits for a CPU do not count.
 *
 * <ol>
 *   <li><b>One hand-off.</b> {@link Parallel#forRange} over 8 parts of little work, many times,
 *       with a spinning helper (as within a step), with a helper that parks after every range
 *       (the cost of a wake), and on one thread (no hand-off): wall and CPU time per call, the
 *       caller's and the helpers'.</li>
 *   <li><b>Whole decode, A B C in one JVM.</b> 48-token greedy decode after a 64-token prompt through
 *       {@link Transformer#forward} at 2 threads with the element-wise work after the products
 *       (residual adds, SwiGLU) fused into the products' parts, the same unfused (done by the
 *       calling thread after each range), and fused on 1 thread: per token the hand-offs
 *       ({@link Parallel#splits()}), the helper wakes, the calling thread's CPU time, every
 *       thread's CPU time (caller plus pool workers) and the wall time; medians over rounds.</li>
 * </ol>
 * Run with the engine's test classpath:
 * <pre>
 * java --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED \
 *      -cp kvtier-engine/target/classes:kvtier-engine/target/test-classes:kvtier-cli/target/kvtier.jar \
 *      io.kvtier.model.StepOverheadComparison /tmp/15m.bin [rounds]
 * </pre>
 */
public final class StepOverheadComparison {

    private static final int TOKENS = 48;
    /** Prompt tokens before the measured decode: positions from 64 on, where attention is split too. */
    private static final int PROMPT = 64;
    private static final int CALLS = 20_000;
    private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    /** A part's work in the hand-off measurement: a sum over 1,024 floats in L1 (~0.2-0.5 us). */
    private static final float[] DATA = new float[1024];
    private static final float[] sink = new float[2];

    private StepOverheadComparison() {
    }

    /** A pool whose worker threads are recorded, so that their CPU time can be read. */
    record Pool(ForkJoinPool pool, List<Thread> workers) {
        static Pool of(int parallelism) {
            List<Thread> workers = new CopyOnWriteArrayList<>();
            ForkJoinPool pool = new ForkJoinPool(parallelism, p -> {
                var t = ForkJoinPool.defaultForkJoinWorkerThreadFactory.newThread(p);
                workers.add(t);
                return t;
            }, null, false);
            return new Pool(pool, workers);
        }

        long workerCpu() {
            long sum = 0;
            for (Thread t : workers) {
                long ns = MX.getThreadCpuTime(t.threadId());
                sum += Math.max(0, ns);   // -1 once a worker has ended: its time is lost, rarely
            }
            return sum;
        }
    }

    public static void main(String[] args) {
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 9;
        Pool two = Pool.of(2);
        Pool one = Pool.of(1);
        try {
            handOffs(two, one, rounds);
            decodes(Path.of(args[0]), two, one, rounds);
        } finally {
            two.pool().shutdownNow();
            one.pool().shutdownNow();
        }
    }

    /** Part 1: the cost of one hand-off of a range of little work (compare the CPU of 2 threads with 1 thread's). */
    private static void handOffs(Pool two, Pool one, int rounds) {
        String[] names = {"2 threads, helper spins", "2 threads, helper parks", "1 thread (no hand-off)"};
        Parallel[] ps = {new Parallel(two.pool(), Parallel.SPIN_NANOS, 0), new Parallel(two.pool(), 0, 0),
                new Parallel(one.pool(), Parallel.SPIN_NANOS, 0)};
        Pool[] pools = {two, two, one};
        double[][][] m = new double[ps.length][4][rounds];   // wall, caller cpu, helper cpu, wakes per call
        for (int r = -2; r < rounds; r++) {                   // two warm-up rounds
            for (int v = 0; v < ps.length; v++) {
                Parallel p = ps[v];
                long w0 = p.wakes();
                long c0 = MX.getCurrentThreadCpuTime();
                long h0 = pools[v].workerCpu();
                long t0 = System.nanoTime();
                for (int i = 0; i < CALLS; i++) {
                    p.forRange(8, 1, 1, (worker, from, to) -> {
                        for (int part = from; part < to; part++) {
                            sink[worker] += sum(DATA);
                        }
                    });
                }
                long wall = System.nanoTime() - t0;
                if (r >= 0) {
                    m[v][0][r] = wall / (double) CALLS;
                    m[v][1][r] = (MX.getCurrentThreadCpuTime() - c0) / (double) CALLS;
                    m[v][2][r] = (pools[v].workerCpu() - h0) / (double) CALLS;
                    m[v][3][r] = (p.wakes() - w0) / (double) CALLS;
                }
            }
        }
        System.out.printf(Locale.ROOT, "one hand-off of 8 parts of a 1,024-float sum, %d calls a round, median of %d rounds:%n", CALLS, rounds);
        for (int v = 0; v < ps.length; v++) {
            System.out.printf(Locale.ROOT, "  %-24s wall %7.2f us, caller CPU %7.2f us, helper CPU %7.2f us, wakes %.3f per call%n",
                    names[v], median(m[v][0]) / 1e3, median(m[v][1]) / 1e3, median(m[v][2]) / 1e3, median(m[v][3]));
        }
    }

    /** Part 2: whole single-sequence decode, fused against unfused against one thread. */
    private static void decodes(Path model, Pool two, Pool one, int rounds) {
        String[] names = {"fused, 2 threads", "unfused, 2 threads", "fused, 1 thread"};
        try (Checkpoint ck = Checkpoint.load(model)) {
            Parallel[] ps = {new Parallel(two.pool()), new Parallel(two.pool()), new Parallel(one.pool())};
            Pool[] pools = {two, two, one};
            Transformer[] ts = {new Transformer(ck, Kernels.best(), ps[0], true),
                    new Transformer(ck, Kernels.best(), ps[1], false), new Transformer(ck, Kernels.best(), ps[2], true)};
            long warmEnd = System.nanoTime() + 3_000_000_000L;
            while (System.nanoTime() < warmEnd) {
                for (Transformer t : ts) {
                    decode(t);
                }
            }
            // per variant: wall, caller CPU, all threads' CPU (us per token), splits, wakes per token
            double[][][] m = new double[ts.length][5][rounds];
            for (int r = 0; r < rounds; r++) {
                for (int v = 0; v < ts.length; v++) {
                    try (LogitsDriver d = new LogitsDriver(ts[v], 16, PROMPT + TOKENS)) {
                        float[] logits = d.feed(new int[PROMPT]);   // prefill, not measured
                        long s0 = ps[v].splits();
                        long w0 = ps[v].wakes();
                        long c0 = MX.getCurrentThreadCpuTime();
                        long h0 = pools[v].workerCpu();
                        long t0 = System.nanoTime();
                        for (int i = 0; i < TOKENS; i++) {
                            logits = d.feed(LogitsDriver.argmax(logits));
                        }
                        long wall = System.nanoTime() - t0;
                        long caller = MX.getCurrentThreadCpuTime() - c0;
                        long all = caller + pools[v].workerCpu() - h0;
                        int steps = TOKENS;
                        m[v][0][r] = wall / 1e3 / steps;
                        m[v][1][r] = caller / 1e3 / steps;
                        m[v][2][r] = all / 1e3 / steps;
                        m[v][3][r] = (ps[v].splits() - s0) / (double) steps;
                        m[v][4][r] = (ps[v].wakes() - w0) / (double) steps;
                    }
                }
            }
            System.out.printf(Locale.ROOT, "%d-token decode at positions %d-%d of %s, per token, median of %d rounds (A B C):%n", TOKENS, PROMPT, PROMPT + TOKENS - 1,
                    model.getFileName(), rounds);
            for (int v = 0; v < ts.length; v++) {
                System.out.printf(Locale.ROOT,
                        "  %-19s wall %8.1f us, caller CPU %8.1f us, all threads' CPU %8.1f us, hand-offs %5.1f, wakes %4.2f%n",
                        names[v], median(m[v][0]), median(m[v][1]), median(m[v][2]), median(m[v][3]), median(m[v][4]));
            }
            double[] callerRatio = new double[rounds];
            double[] allRatio = new double[rounds];
            for (int r = 0; r < rounds; r++) {
                callerRatio[r] = m[0][1][r] / m[1][1][r];
                allRatio[r] = m[0][2][r] / m[1][2][r];
            }
            System.out.printf(Locale.ROOT, "per-round ratio fused / unfused: caller CPU %.3f, all threads' CPU %.3f%n",
                    median(callerRatio), median(allRatio));
            for (Transformer t : ts) {
                t.close();
            }
        }
    }

    /** A prompt and {@link #TOKENS} greedy decode steps of one sequence (warm-up). */
    private static void decode(Transformer t) {
        try (LogitsDriver d = new LogitsDriver(t, 16, PROMPT + TOKENS)) {
            float[] logits = d.feed(new int[PROMPT]);
            for (int i = 0; i < TOKENS; i++) {
                logits = d.feed(LogitsDriver.argmax(logits));
            }
        }
    }

    private static float sum(float[] v) {
        float s = 0;
        for (float x : v) {
            s += x;
        }
        return s;
    }

    private static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }
}

package io.kvtier.engine;

import io.kvtier.kv.ExtraKeys;
import io.kvtier.model.Kernels;
import io.kvtier.model.Model;
import io.kvtier.model.Models;
import io.kvtier.offload.OffloadConfig;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Benchmark (not a test): where decode with offloading on (decode blocks stored too) spends more
 * than with it off, as {@code bench offload} runs it (one engine per side, waves of 1 or 32 requests
 * with distinct two-token prompts, the "on" engine's host tier twice its device pool and full before
 * timing), in CPU time per generated token split by thread kind (the engine thread, the compute
 * pool's helpers, the transfer threads, the rest: GC and JIT), the engine thread's allocation per
 * token and the wall time, rounds alternating off-on, on-off in one JVM. CPU time, not wall time:
 * on a loaded machine a step's wait for a core does not count. Run after {@code mvn -pl kvtier-engine
 * -am test-compile}:
 * <pre>
 * java --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED \
 *      -cp kvtier-engine/target/classes:kvtier-engine/target/test-classes:kvtier-core/target/classes:kvtier-cli/target/kvtier.jar \
 *      io.kvtier.engine.OffloadDecodeCpuComparison ../shared/models/stories260K.bin THREADS ROUNDS [BATCHES]
 * </pre>
 */
public final class OffloadDecodeCpuComparison {

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    private static final int PROMPT_SPAN = 400;
    private static final long WAVE_NANOS = 300_000_000L;
    private static final String[] KINDS = {"engine", "compute", "transfer", "other"};

    private OffloadDecodeCpuComparison() {
    }

    /** CPU ns per thread kind, engine-thread bytes allocated, wall ns and tokens of some waves. */
    private static final class Cost {
        final double[] cpu = new double[KINDS.length];
        double alloc;
        double wall;
        long tokens;

        void add(Cost c) {
            for (int i = 0; i < cpu.length; i++) {
                cpu[i] += c.cpu[i];
            }
            alloc += c.alloc;
            wall += c.wall;
            tokens += c.tokens;
        }

        double total() {
            return Arrays.stream(cpu).sum();
        }

        String perToken() {
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < KINDS.length; i++) {
                b.append(String.format(Locale.ROOT, "%s %.2f, ", KINDS[i], cpu[i] / 1e3 / tokens));
            }
            return b + String.format(Locale.ROOT, "all %.2f us CPU; %.0f B alloc; %.2f us wall per token",
                    total() / 1e3 / tokens, alloc / tokens, wall / 1e3 / tokens);
        }
    }

    private static final class Side implements AutoCloseable {
        final Engine engine;
        final int batch;
        final int steps;
        long nextId;

        Side(Path model, int threads, int batch, OffloadSetup setup) {
            Model cp = Models.load(model);
            this.batch = batch;
            this.steps = Math.min(256, cp.config().seqLen() - 2);
            EngineConfig config = new EngineConfig(16, deviceBlocks(cp, batch), 4096, Math.max(batch, 1), false, -1);
            this.engine = LlamaRunner.engine(cp, config, Kernels.best(), threads, setup);
        }

        /** Waves until {@code minNanos} of decode are timed. */
        Cost run(long minNanos) {
            Cost total = new Cost();
            do {
                for (int i = 0; i < batch; i++) {
                    long id = nextId++;
                    int[] prompt = {1 + (int) (id % PROMPT_SPAN), 1 + (int) (id / PROMPT_SPAN % PROMPT_SPAN)};
                    engine.submit(new Request(id, prompt, steps, SamplingParams.GREEDY, ExtraKeys.NONE));
                }
                engine.step();
                Map<Long, Long> cpu0 = threadCpu();
                long alloc0 = THREADS.getCurrentThreadAllocatedBytes();
                long t0 = System.nanoTime();
                long before = engine.stats().generatedTokens();
                engine.runToCompletion();
                engine.drainTransfers();
                Cost c = new Cost();
                c.wall = System.nanoTime() - t0;
                c.alloc = THREADS.getCurrentThreadAllocatedBytes() - alloc0;
                c.tokens = engine.stats().generatedTokens() - before;
                attribute(cpu0, threadCpu(), c);
                total.add(c);
            } while (total.wall < minNanos);
            return total;
        }

        long stored() {
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

    private static Map<Long, Long> threadCpu() {
        long[] ids = THREADS.getAllThreadIds();
        long[] cpu = THREADS.getThreadCpuTime(ids);
        Map<Long, Long> m = new HashMap<>();
        for (int i = 0; i < ids.length; i++) {
            m.put(ids[i], cpu[i]);
        }
        return m;
    }

    private static void attribute(Map<Long, Long> before, Map<Long, Long> after, Cost c) {
        long self = Thread.currentThread().threadId();
        for (Map.Entry<Long, Long> e : after.entrySet()) {
            long d = e.getValue() - before.getOrDefault(e.getKey(), 0L);
            if (d <= 0) {
                continue;
            }
            ThreadInfo info = THREADS.getThreadInfo(e.getKey());
            String name = info == null ? "" : info.getThreadName();
            int kind = e.getKey() == self ? 0 : name.startsWith("kvtier-compute") ? 1 : name.startsWith("kvtier-transfer") ? 2 : 3;
            c.cpu[kind] += d;
        }
    }

    public static void main(String[] args) {
        Path model = Path.of(args[0]);
        int threads = Integer.parseInt(args[1]);
        int rounds = Integer.parseInt(args[2]);
        int[] batches = args.length > 3 ? Arrays.stream(args[3].split(",")).mapToInt(Integer::parseInt).toArray() : new int[] {1, 32};
        for (int batch : batches) {
            compare(model, threads, rounds, batch);
        }
    }

    private static void compare(Path model, int threads, int rounds, int batch) {
        int tierChunks = 2 * deviceBlocks(Models.load(model), batch);
        OffloadSetup on = new OffloadSetup(0, tierChunks, "lru", OffloadConfig.DEFAULT.withOffloadPromptOnly(false));
        Cost offAll = new Cost();
        Cost onAll = new Cost();
        double[] ratios = new double[rounds];
        try (Side a = new Side(model, threads, batch, OffloadSetup.OFF); Side b = new Side(model, threads, batch, on)) {
            long until = System.nanoTime() + 1_000_000_000L;
            while (System.nanoTime() < until || b.stored() <= tierChunks) {
                b.run(0);
                a.run(0);
            }
            for (int r = 0; r < rounds; r++) {
                Cost x;
                Cost y;
                if (r % 2 == 0) {
                    x = a.run(WAVE_NANOS);
                    y = b.run(WAVE_NANOS);
                } else {
                    y = b.run(WAVE_NANOS);
                    x = a.run(WAVE_NANOS);
                }
                offAll.add(x);
                onAll.add(y);
                ratios[r] = (x.total() / x.tokens) / (y.total() / y.tokens);
                System.out.printf(Locale.ROOT, "%2d seq round %d: off %s%n               on  %s%n", batch, r, x.perToken(), y.perToken());
            }
        }
        Arrays.sort(ratios);
        System.out.printf(Locale.ROOT, "%2d seq, %d threads, all rounds: off %s%n                            on  %s%n"
                        + "    process CPU per token off/on median %.3f%n",
                batch, threads, offAll.perToken(), onAll.perToken(), ratios[rounds / 2]);
    }
}

package io.kvtier.engine;

import io.kvtier.kv.BlockHasher;
import io.kvtier.kv.BlockPool;
import io.kvtier.kv.ExtraKeys;
import io.kvtier.kv.KvLayout;
import io.kvtier.kv.Namespace;
import io.kvtier.offload.OffloadConfig;
import io.kvtier.offload.OffloadScheduler;
import io.kvtier.offload.transfer.AsyncTransferEngine;
import io.kvtier.offload.transfer.ChunkCopier;
import io.kvtier.tier.CachePolicy;
import io.kvtier.tier.HostTier;
import io.kvtier.tier.KvEvents;
import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * Benchmark (not a test): bytes the engine thread allocates per step of 32 sequences decoding
 * together on the fingerprint model (a fake, so the model's own work is nearly nothing), with
 * offloading off and on (decode blocks stored too: every 16th step of a sequence completes a
 * block and stores it), alternating in one JVM. The difference is what the offload bookkeeping
 * allocates per step. Run with the engine's test classpath:
 * <pre>
 * java -cp kvtier-engine/target/classes:kvtier-engine/target/test-classes:kvtier-cli/target/kvtier.jar \
 *      io.kvtier.engine.OffloadStepAllocationComparison [rounds]
 * </pre>
 */
public final class OffloadStepAllocationComparison {

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    private static final int BLOCK_SIZE = 16;
    private static final int SEQUENCES = 32;
    private static final int WARM_STEPS = 300;
    private static final int STEPS = 1_000;

    private OffloadStepAllocationComparison() {
    }

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        double[][] bytes = new double[2][rounds];
        for (int r = 0; r < rounds; r++) {
            bytes[0][r] = bytesPerStep(false);
            bytes[1][r] = bytesPerStep(true);
            System.out.printf(Locale.ROOT, "round %d: offload off %.0f, on %.0f bytes per step%n", r, bytes[0][r], bytes[1][r]);
        }
        double off = median(bytes[0]);
        double on = median(bytes[1]);
        System.out.printf(Locale.ROOT, "%d sequences decoding, median of %d rounds of %d steps: off %.0f, on %.0f bytes per step;"
                + " the offload bookkeeping %.0f bytes per step%n", SEQUENCES, rounds, STEPS, off, on, on - off);
    }

    /** Bytes the calling (engine) thread allocates per decode step, after the prompts and a warm-up. */
    private static double bytesPerStep(boolean offloading) {
        KvLayout layout = FingerprintModelRunner.layout(BLOCK_SIZE);
        int deviceBlocks = SEQUENCES * ((40 + WARM_STEPS + STEPS) / BLOCK_SIZE + 2);
        BlockPool pool = new BlockPool(deviceBlocks, layout);
        OffloadConfig config = OffloadConfig.DEFAULT.withOffloadPromptOnly(false);
        Namespace ns = Namespace.of("fingerprint", layout, config.blocksPerChunk());
        OffloadScheduler offload = null;
        if (offloading) {
            int hostSlots = deviceBlocks;
            HostTier host = new HostTier(hostSlots, layout.bytesPerBlock(), BLOCK_SIZE, CachePolicy.named("lru", hostSlots),
                    KvEvents.discarding());
            AsyncTransferEngine transfers = new AsyncTransferEngine(new ChunkCopier(pool.slab(), layout.bytesPerBlock(), host.slab()), null);
            offload = new OffloadScheduler(config, pool, host, transfers, ns);
        }
        FingerprintModelRunner runner = new FingerprintModelRunner(pool, FingerprintEngines.VOCAB, FingerprintEngines.MAX_POSITIONS);
        EngineConfig ec = EngineConfig.of(BLOCK_SIZE, deviceBlocks).withStopTokens();
        try (Engine engine = new Engine(ec, pool, runner, BlockHasher.sha256(ns), offload)) {
            SplittableRandom rnd = new SplittableRandom(7);
            for (int i = 0; i < SEQUENCES; i++) {
                engine.submit(new Request(1_000_000L + i, FingerprintEngines.randomTokens(rnd, 40), WARM_STEPS + STEPS + 100,
                        SamplingParams.GREEDY, ExtraKeys.NONE));
            }
            for (int s = 0; s < WARM_STEPS; s++) {
                engine.step();
            }
            long before = THREADS.getCurrentThreadAllocatedBytes();
            for (int s = 0; s < STEPS; s++) {
                engine.step();
            }
            return (THREADS.getCurrentThreadAllocatedBytes() - before) / (double) STEPS;
        }
    }

    private static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }
}

package io.kvtier.engine;

import static org.assertj.core.api.Assertions.assertThat;

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
import java.util.function.LongFunction;
import org.junit.jupiter.api.Test;

/**
 * The offload scheduler's work in a decode step that completes no block (15 steps of 16 with
 * decode blocks stored) allocates nothing: the commit's store check and the poll of the real
 * transfer engine. Counted with the thread's allocated bytes, which no JIT state can hide: in the
 * interpreter every allocation is real, so a boxed request id or a fresh list shows here.
 */
class OffloadStepAllocationTest {

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    @Test
    void aDecodeStepsCommitAndPollAllocateNothing() {
        int blockSize = 16;
        KvLayout layout = FingerprintModelRunner.layout(blockSize);
        OffloadConfig config = OffloadConfig.DEFAULT.withOffloadPromptOnly(false);
        BlockPool pool = new BlockPool(64, layout); // the engine closes it
        {
            HostTier host = new HostTier(32, layout.bytesPerBlock(), blockSize, CachePolicy.named("lru", 32), KvEvents.discarding());
            Namespace ns = Namespace.of("fingerprint", layout, config.blocksPerChunk());
            AsyncTransferEngine transfers = new AsyncTransferEngine(new ChunkCopier(pool.slab(), layout.bytesPerBlock(), host.slab()), null);
            OffloadScheduler offload = new OffloadScheduler(config, pool, host, transfers, ns);
            FingerprintModelRunner runner = new FingerprintModelRunner(pool, FingerprintEngines.VOCAB, FingerprintEngines.MAX_POSITIONS);
            try (Engine engine = new Engine(FingerprintEngines.config(blockSize, 64).withStopTokens(), pool, runner,
                    BlockHasher.sha256(ns), offload)) {
                // An id above the JDK's cache of boxed Longs (-128..127): a boxed lookup would allocate.
                Request r = new Request(1_000_003L, FingerprintEngines.randomTokens(new java.util.SplittableRandom(5), 40), 200, SamplingParams.GREEDY, ExtraKeys.NONE);
                engine.submit(r);
                while (r.numComputed() < 4 * blockSize + 5) {
                    engine.step();
                }
                engine.drainTransfers();
                assertThat(offload.storedBlocks(r.id())).as("the request's full blocks are stored").isEqualTo(4);

                LongFunction<int[]> tables = id -> {
                    throw new AssertionError("no store is due, so no block table is asked for");
                };
                int kvWritten = r.numComputed(); // mid-block: nothing new to store
                long baseline = allocatedBy(() -> { }, 20_000);
                long used = allocatedBy(() -> {
                    offload.onCommit(r, kvWritten, tables);
                    offload.poll();
                }, 20_000);

                // Less than a byte per step: no step allocates (one object a step would be >= 320,000
                // bytes). A one-off is allowed: a deoptimization rematerialises the objects C2 had
                // scalar-replaced (1,504 bytes once in one run).
                assertThat(used - baseline).as("bytes allocated by 20,000 commits and polls beyond the measuring loop's own")
                        .isLessThan(20_000);
            }
        }
    }

    /** Bytes this thread allocates running {@code step} {@code n} times (after as many unmeasured runs). */
    private static long allocatedBy(Runnable step, int n) {
        for (int i = 0; i < n; i++) {
            step.run();
        }
        long before = THREADS.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < n; i++) {
            step.run();
        }
        return THREADS.getCurrentThreadAllocatedBytes() - before;
    }
}

package io.kvtier.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.kv.BlockHasher;
import io.kvtier.kv.BlockPool;
import io.kvtier.kv.ExtraKeys;
import io.kvtier.kv.KvLayout;
import io.kvtier.kv.Namespace;
import io.kvtier.offload.OffloadConfig;
import io.kvtier.offload.OffloadScheduler;
import io.kvtier.tier.KvEvents;
import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.Test;

/**
 * What storing costs the engine thread in allocation, in the steady state of a server (decode
 * blocks stored too, the host tier full so every store evicts): two engines on a fake model that
 * computes nothing, one with offloading and one without, fed the same waves of 8 requests, the
 * thread's allocated bytes compared over the same steps. The difference per chunk stored is
 * bounded (one job per step: no per-request job, ticket, result or registry set). Counted with
 * the thread's allocated bytes, which no timing or load changes. (A step that stores nothing
 * allocates nothing: {@link OffloadStepAllocationTest}.)
 */
class OffloadStoreAllocationTest {

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    private static final KvLayout LAYOUT = new KvLayout(5, 4, 8, 16);
    private static final int BATCH = 8;
    /** Tokens generated per request: with a 2-token prompt, KV for 64 positions = 4 chunks stored per request. */
    private static final int STEPS = 63;

    /**
     * Bytes per stored chunk beyond the engine without offloading, at most. Measured 2,152 after
     * the tier stopped hashing a store's few keys into new sets, copying its key list when every
     * key is kept, and building events nobody hears (offload10); 2,723 with one store job per step
     * before that; 4,050 with one job per request (its ticket, result, registry entries and
     * completion). The bound fails on the code of 2,723.
     */
    private static final long BYTES_PER_CHUNK = 2_500;

    private static final class Side implements AutoCloseable {
        final Engine engine;
        final OffloadScheduler offload;
        long nextId;

        Side(boolean on) {
            int deviceBlocks = (BATCH + 1) * LAYOUT.blocksFor(512);
            BlockPool pool = new BlockPool(deviceBlocks, LAYOUT);
            Namespace ns = Namespace.of("fake-idle", LAYOUT, 1);
            this.offload = on ? new OffloadSetup(0, 2 * BATCH * 4, "lru", OffloadConfig.DEFAULT.withOffloadPromptOnly(false))
                    .build(pool, ns, KvEvents.discarding()) : null;
            EngineConfig ec = new EngineConfig(16, deviceBlocks, 4096, BATCH, false, -1);
            this.engine = new Engine(ec, pool, new OffloadStepCpuComparison.FakeIdleModel(), BlockHasher.sha256(ns), offload);
        }

        /** Runs {@code waves} waves; returns {bytes allocated by this thread, steps}. */
        long[] run(int waves) {
            long[] r = new long[2];
            for (int w = 0; w < waves; w++) {
                for (int i = 0; i < BATCH; i++) {
                    long id = 1_000 + nextId++;
                    engine.submit(new Request(id, new int[] {1 + (int) (id % 400), 1 + (int) (id / 400 % 400)}, STEPS,
                            SamplingParams.GREEDY, ExtraKeys.NONE));
                }
                long steps0 = engine.stats().steps();
                long a0 = THREADS.getCurrentThreadAllocatedBytes();
                engine.runToCompletion();
                engine.drainTransfers();
                r[0] += THREADS.getCurrentThreadAllocatedBytes() - a0;
                r[1] += engine.stats().steps() - steps0;
            }
            return r;
        }

        long chunksStored() {
            return offload.stats().blocksStored().getOrDefault("host", 0L);
        }

        @Override
        public void close() {
            engine.close();
        }
    }

    @Test
    void storingAllocatesABoundedFewBytesPerChunkBeyondTheEngineWithoutOffloading() {
        try (Side off = new Side(false); Side on = new Side(true)) {
            for (int i = 0; i < 20; i++) { // the host tier fills (64 chunks) and the JIT has its say
                off.run(5);
                on.run(5);
            }
            long offBytes = 0;
            long onBytes = 0;
            long steps = 0;
            long stored0 = on.chunksStored();
            for (int i = 0; i < 6; i++) {
                long[] a = i % 2 == 0 ? off.run(5) : null;
                long[] b = on.run(5);
                if (a == null) {
                    a = off.run(5);
                }
                assertThat(b[1]).as("the same steps on both sides").isEqualTo(a[1]);
                offBytes += a[0];
                onBytes += b[0];
                steps += a[1];
            }
            long chunks = on.chunksStored() - stored0;
            assertThat(chunks).as("4 chunks of each of the 240 requests").isEqualTo(6 * 5 * BATCH * 4);
            double perChunk = (double) (onBytes - offBytes) / chunks;
            assertThat(perChunk).as("bytes per stored chunk beyond the engine without offloading (%d steps, off %d B/step)",
                    steps, offBytes / steps).isLessThan(BYTES_PER_CHUNK);
        }
    }
}

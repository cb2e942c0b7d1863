package io.kvtier.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.kv.BlockHasher;
import io.kvtier.kv.BlockPool;
import io.kvtier.kv.ExtraKeys;
import io.kvtier.kv.KvLayout;
import io.kvtier.kv.Namespace;
import io.kvtier.offload.OffloadConfig;
import io.kvtier.offload.OffloadScheduler;
import io.kvtier.offload.OffloadStats;
import io.kvtier.offload.transfer.ChunkCopier;
import io.kvtier.offload.transfer.FaultInjectingTransferEngine;
import io.kvtier.tier.CachePolicy;
import io.kvtier.tier.HostTier;
import io.kvtier.tier.KvEvents;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * Load or recompute ({@code --load-policy faster}) on the fingerprint model slowed to about 1 ms
 * a token: with host loads delayed by 300 ms (a {@link DelayingTransferEngine}), a hit is loaded
 * once (nothing is measured yet), then recomputed; without the delay every hit is loaded. The
 * margins are wide (a 28-token recompute of about 28 ms against a 300 ms load, or against a copy
 * of microseconds), and the assertions are on tokens and decisions, never on times.
 */
class LoadOrRecomputeTest {

    private static final int BS = 4;
    private static final long NANOS_PER_TOKEN = 1_000_000;

    /** A test fake: the fingerprint model, taking at least NANOS_PER_TOKEN per computed token. */
    private static final class SlowRunner implements ModelRunner {
        private final FingerprintModelRunner inner;

        SlowRunner(FingerprintModelRunner inner) {
            this.inner = inner;
        }

        @Override
        public float[][] forward(List<ScheduledChunk> chunks) {
            long tokens = chunks.stream().mapToLong(c -> c.tokens().length).sum();
            long end = System.nanoTime() + tokens * NANOS_PER_TOKEN;
            float[][] out = inner.forward(chunks);
            for (long left = end - System.nanoTime(); left > 0; left = end - System.nanoTime()) {
                LockSupport.parkNanos(left);
            }
            return out;
        }

        @Override
        public int vocabSize() {
            return inner.vocabSize();
        }

        @Override
        public int maxPositions() {
            return inner.maxPositions();
        }
    }

    private static Engine engine(Duration loadDelay) {
        KvLayout layout = FingerprintModelRunner.layout(BS);
        BlockPool pool = new BlockPool(16, layout);
        HostTier host = new HostTier(32, layout.bytesPerBlock(), BS, CachePolicy.named("lru", 32), KvEvents.discarding());
        Namespace ns = Namespace.of("fingerprint", layout, 1);
        var transfers = new DelayingTransferEngine(
                new FaultInjectingTransferEngine(new ChunkCopier(pool.slab(), layout.bytesPerBlock(), host.slab())), loadDelay);
        OffloadScheduler offload = new OffloadScheduler(OffloadConfig.DEFAULT.withLoadPolicy(io.kvtier.offload.LoadPolicy.FASTER), pool, host, transfers, ns);
        ModelRunner runner = new SlowRunner(new FingerprintModelRunner(pool, FingerprintEngines.VOCAB, FingerprintEngines.MAX_POSITIONS));
        return new Engine(FingerprintEngines.config(BS, 16), pool, runner, BlockHasher.sha256(ns), offload);
    }

    private static int[] prompt() {
        int[] p = new int[32];
        for (int i = 0; i < p.length; i++) {
            p[i] = 1 + (i * 13) % 40;
        }
        return p;
    }

    /** Runs the prompt with the device prefix cache dropped first; returns the finished request. */
    private static Request run(Engine e, long id) {
        e.resetDevicePrefixCache();
        Request r = new Request(id, prompt(), 2, SamplingParams.GREEDY, ExtraKeys.NONE);
        e.submit(r);
        e.runToCompletion();
        e.drainTransfers();
        return r;
    }

    @Test
    void aHitSlowerToLoadThanToRecomputeIsRecomputed() {
        try (Engine e = engine(Duration.ofMillis(300))) {
            int[] want = FingerprintEngines.reference(prompt(), 2);
            assertThat(run(e, 0).outputIds()).containsExactly(want);
            Request first = run(e, 1);
            assertThat(first.externalHitTokens()).as("no load measured yet: loaded").containsEntry("host", 28);
            long loadedBefore = e.offload().stats().blocksLoaded().get("host");
            Request second = run(e, 2);
            assertThat(second.externalHitTokens()).as("tokens loaded").isEmpty();
            assertThat(second.outputIds()).containsExactly(want);
            assertThat(e.offload().stats().blocksLoaded().get("host")).isEqualTo(loadedBefore);
            OffloadStats.LoadDecisions d = e.offload().stats().loadDecisions();
            assertThat(d.decided()).isEqualTo(2);
            assertThat(d.recomputed()).isEqualTo(1);
            assertThat(d.tokensRecomputed()).isEqualTo(28);
            assertThat(d.bandwidth()).containsKey("host");
            assertThat(d.prefillTokensPerSecond()).isPositive();
        }
    }

    @Test
    void aFastTierIsLoaded() {
        try (Engine e = engine(Duration.ZERO)) {
            int[] want = FingerprintEngines.reference(prompt(), 2);
            run(e, 0);
            for (int i = 1; i <= 3; i++) {
                Request r = run(e, i);
                assertThat(r.externalHitTokens()).as("run %d", i).containsEntry("host", 28);
                assertThat(r.outputIds()).containsExactly(want);
            }
            OffloadStats.LoadDecisions d = e.offload().stats().loadDecisions();
            assertThat(d.decided()).isEqualTo(3);
            assertThat(d.recomputed()).isZero();
            assertThat(d.cut()).isZero();
        }
    }
}

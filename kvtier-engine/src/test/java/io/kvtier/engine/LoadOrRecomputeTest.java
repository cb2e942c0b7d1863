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
import io.kvtier.offload.transfer.TransferClock;
import io.kvtier.tier.CachePolicy;
import io.kvtier.tier.HostTier;
import io.kvtier.tier.KvEvents;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Load or recompute ({@code --load-policy faster}) on the fingerprint model with injected costs on
 * a virtual clock (the transfer engine's, which also times the engine's forward passes): a forward
 * pass takes 1 ms a token ({@link SlowRunner}), a host load or store 300 ms or 10 us
 * ({@link DelayingTransferEngine}). On a slow link even the first hit is recomputed (a 28-token
 * recompute of 28 ms against a load priced from the stores that filled the host tier); every hit
 * is loaded when the link is fast. Nothing is measured on the machine, so the decisions do not depend on
 * its load.
 */
class LoadOrRecomputeTest {

    private static final int BS = 4;
    private static final long NANOS_PER_TOKEN = 1_000_000;

    /** A test fake: the fingerprint model, taking NANOS_PER_TOKEN of the virtual clock per computed token. */
    private static final class SlowRunner implements ModelRunner {
        private final FingerprintModelRunner inner;
        private final TransferClock.Manual clock;

        SlowRunner(FingerprintModelRunner inner, TransferClock.Manual clock) {
            this.inner = inner;
            this.clock = clock;
        }

        @Override
        public float[][] forward(List<ScheduledChunk> chunks) {
            long tokens = chunks.stream().mapToLong(c -> c.tokens().length).sum();
            float[][] out = inner.forward(chunks);
            clock.advance(Duration.ofNanos(tokens * NANOS_PER_TOKEN));
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

    private static Engine engine(Duration loadTime) {
        TransferClock.Manual clock = new TransferClock.Manual(0);
        KvLayout layout = FingerprintModelRunner.layout(BS);
        BlockPool pool = new BlockPool(16, layout);
        HostTier host = new HostTier(32, layout.bytesPerBlock(), BS, CachePolicy.named("lru", 32), KvEvents.discarding());
        Namespace ns = Namespace.of("fingerprint", layout, 1);
        var transfers = new DelayingTransferEngine(
                new FaultInjectingTransferEngine(new ChunkCopier(pool.slab(), layout.bytesPerBlock(), host.slab())), clock, loadTime);
        OffloadScheduler offload = new OffloadScheduler(OffloadConfig.DEFAULT.withLoadPolicy(io.kvtier.offload.LoadPolicy.FASTER), pool, host, transfers, ns);
        ModelRunner runner = new SlowRunner(new FingerprintModelRunner(pool, FingerprintEngines.VOCAB, FingerprintEngines.MAX_POSITIONS), clock);
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
    void aHitSlowerToLoadThanToRecomputeIsRecomputedFromTheFirstOne() {
        try (Engine e = engine(Duration.ofMillis(300))) {
            int[] want = FingerprintEngines.reference(prompt(), 2);
            assertThat(run(e, 0).outputIds()).containsExactly(want);
            for (int i = 1; i <= 2; i++) {
                // No load was ever measured: the stores (300 ms a job) price the link, so the first hit is recomputed too.
                Request r = run(e, i);
                assertThat(r.externalHitTokens()).as("run %d: tokens loaded", i).isEmpty();
                assertThat(r.outputIds()).containsExactly(want);
            }
            assertThat(e.offload().stats().blocksLoaded().getOrDefault("host", 0L)).isZero();
            OffloadStats.LoadDecisions d = e.offload().stats().loadDecisions();
            assertThat(d.decided()).isEqualTo(2);
            assertThat(d.recomputed()).isEqualTo(2);
            assertThat(d.tokensRecomputed()).isEqualTo(56);
            assertThat(d.bandwidth()).as("measured loads only").doesNotContainKey("host");
            assertThat(d.prefillTokensPerSecond()).isPositive();
        }
    }

    @Test
    void aFastTierIsLoaded() {
        try (Engine e = engine(Duration.ofNanos(10_000))) {
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
            // Decided from a measured load (10 us for 7 blocks) and a measured recompute, not for lack of one.
            assertThat(d.bandwidth()).containsKey("host");
            assertThat(d.prefillTokensPerSecond()).isCloseTo(1000, org.assertj.core.data.Offset.offset(1.0));
        }
    }
}

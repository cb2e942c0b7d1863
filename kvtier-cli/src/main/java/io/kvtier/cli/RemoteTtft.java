package io.kvtier.cli;

import io.kvtier.engine.Engine;
import io.kvtier.engine.EngineConfig;
import io.kvtier.engine.LlamaRunner;
import io.kvtier.engine.OffloadSetup;
import io.kvtier.engine.Request;
import io.kvtier.engine.SamplingParams;
import io.kvtier.kv.ExtraKeys;
import io.kvtier.model.Kernels;
import io.kvtier.model.Model;
import io.kvtier.offload.DiskWritePolicy;
import io.kvtier.offload.OffloadConfig;
import io.kvtier.tier.remote.RemoteSettings;
import io.kvtier.tier.remote.RemoteTrace;
import java.time.Duration;
import java.util.List;
import java.util.Random;

/**
 * {@code bench offload --remote-url}: time to first token of a prompt whose prefix an engine loads
 * from the remote store (its host tier empty: probe, promotion into host slots, load) against the
 * same prompt recomputed, interleaved A B A B in one engine. Each repeat uses a prompt of its own
 * (its second token differs), so its recompute finds nothing in the store and writes the prefix
 * through; the host tier and the engine's probe answers are then dropped and the prompt runs again.
 */
final class RemoteTtft {

    private RemoteTtft() {
    }

    static void print(Model cp, String url, int[] prompt, long prefixBytes, int repeats, int threads) {
        int blockSize = 16;
        var layout = cp.config().kvLayout(blockSize);
        EngineConfig config = new EngineConfig(blockSize, 2 * layout.blocksFor(cp.config().seqLen()), 4096, 4, true, -1);
        String tenant = "bench" + Long.toHexString(new Random().nextLong() & 0xffffffL);
        RemoteSettings settings = RemoteSettings.of(List.of(url), false, tenant, null).withTimeout(Duration.ofSeconds(10));
        OffloadSetup setup = new OffloadSetup(prefixBytes * 2 + (64L << 20), 0, "lru", OffloadConfig.DEFAULT).withRemote(
                new OffloadSetup.RemoteSetup(settings, DiskWritePolicy.THROUGH, 1, Math.max(64L << 20, 2 * prefixBytes),
                        System.err::println));
        double recompute = Double.MAX_VALUE;
        double fromRemote = Double.MAX_VALUE;
        long id = 0;
        try (Engine e = LlamaRunner.engine(cp, config, Kernels.best(), threads, setup)) {
            for (int i = 0; i < repeats + 1; i++) {
                int[] p = prompt.clone();
                p[1] = 3 + i; // a prompt of this repeat's own: nothing of it is in the store yet
                e.resetCache();
                double r = time(e, id++, p);
                e.drainTransfers(); // written through to the store
                e.resetCache(); // the host tier and the probe answers forgotten: the prefix must come from the store
                long before = e.offload().remoteStats().chunksLoaded();
                RemoteTrace.clear();
                long[] gc0 = gcCountAndMillis();
                double h = time(e, id++, p);
                if (RemoteTrace.ON) {
                    long[] gc1 = gcCountAndMillis();
                    System.out.println("remote hit, repeat " + i + " (" + (h * 1e3) + " ms; " + (gc1[0] - gc0[0])
                            + " GC pauses in it, " + (gc1[1] - gc0[1]) + " ms), ms since submit:");
                    RemoteTrace.table().forEach(System.out::println);
                }
                if (e.offload().remoteStats().chunksLoaded() == before) {
                    throw new IllegalStateException("bench offload: the remote TTFT run loaded nothing from the store: "
                            + e.offload().remoteStats().loadFailures() + " " + e.offload().remoteStats().storesDroppedBy());
                }
                e.drainTransfers();
                if (i > 0) {
                    recompute = Math.min(recompute, r);
                    fromRemote = Math.min(fromRemote, h);
                }
            }
        }
        System.out.printf("prefix from remote:   %8.2f ms  (%.1fx faster than recompute %.2f ms; empty host tier: probe, "
                + "promotion from %s, load)%n", fromRemote * 1e3, recompute / fromRemote, recompute * 1e3, RemoteSettings.redact(url));
    }

    /** Collections so far and their milliseconds, over every collector of the JVM. */
    private static long[] gcCountAndMillis() {
        long[] out = new long[2];
        for (var gc : java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()) {
            out[0] += Math.max(0, gc.getCollectionCount());
            out[1] += Math.max(0, gc.getCollectionTime());
        }
        return out;
    }

    private static double time(Engine e, long id, int[] prompt) {
        long t0 = System.nanoTime();
        RemoteTrace.mark("submit");
        e.submit(new Request(id, prompt, 1, SamplingParams.GREEDY, ExtraKeys.NONE));
        e.runToCompletion();
        return (System.nanoTime() - t0) / 1e9;
    }
}

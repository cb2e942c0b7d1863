package io.kvtier.cli;

import io.kvtier.bench.Samples;
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
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Arrays;

/**
 * {@code bench offload --remote-url}: time to first token of a prompt whose prefix an engine loads
 * from the remote store (its host tier empty: probe, promotion into host slots, load) against the
 * same prompt recomputed, in pairs (recompute, then remote: A B A B) in one engine. Each repeat
 * uses a prompt of its own (its second token differs), so its recompute finds nothing in the
 * store and writes the prefix through; the host tier and the engine's probe answers are then
 * dropped and the prompt runs again. A warm-up pair first, then {@code repeats} pairs; printed:
 * the median wall time of each side, the median of the pairs' own ratios (a load swing slows
 * both sides of a pair) with their range, and the same for the process's CPU time (every thread
 * of this JVM: compute, transfer and the store client's I/O; not the server's). After each remote
 * hit the prompt runs once more, its prefix still on the device: the step after the load alone,
 * measured in the same engine and minutes as the hit it follows.
 */
final class RemoteTtft {

    private RemoteTtft() {
    }

    /** One side of a pair: wall and process CPU seconds. */
    record Sample(double wall, double cpu) {
    }

    /**
     * Runs the pairs and prints the figures.
     *
     * @param run the store and the run's tenant, under which the prompts' chunks go
     * @param prefixBytes KV bytes of the prompt's full chunks (sizes the host tier and the write budget)
     * @throws BadInputException if a remote run loaded nothing from the store (it went away: one line, no stack trace)
     * @throws java.util.concurrent.CancellationException if a signal stopped the run
     */
    static void print(Model cp, RemoteBenchRun run, int[] prompt, long prefixBytes, int repeats, int threads) {
        int blockSize = 16;
        var layout = cp.config().kvLayout(blockSize);
        EngineConfig config = new EngineConfig(blockSize, 2 * layout.blocksFor(cp.config().seqLen()), 4096, 4, true, -1);
        RemoteSettings store = run.store();
        String tenant = run.tenant();
        RemoteSettings settings = store.withTenant(tenant).withTimeout(Duration.ofSeconds(10));
        OffloadSetup setup = new OffloadSetup(prefixBytes * 2 + (64L << 20), 0, "lru", OffloadConfig.DEFAULT).withRemote(
                new OffloadSetup.RemoteSetup(settings, DiskWritePolicy.THROUGH, 1, Math.max(64L << 20, 2 * prefixBytes),
                        System.err::println));
        Sample[][] pairs = new Sample[repeats][];
        long id = 0;
        run.enter();
        try (Engine e = LlamaRunner.engine(cp, config, Kernels.best(), threads, setup)) {
            for (int i = 0; i < repeats + 1; i++) {
                run.checkRunning();
                int[] p = promptOfRepeat(prompt, i, cp.config().vocabSize());
                e.resetCache();
                Sample r = time(e, id++, p);
                e.drainTransfers(); // written through to the store
                e.resetCache(); // the host tier and the probe answers forgotten: the prefix must come from the store
                long before = e.offload().remoteStats().chunksLoaded();
                RemoteTrace.clear();
                long[] gc0 = gcCountAndMillis();
                Sample h = time(e, id++, p);
                if (RemoteTrace.ON) {
                    long[] gc1 = gcCountAndMillis();
                    System.out.println("remote hit, repeat " + i + " (" + (h.wall() * 1e3) + " ms; "
                            + io.kvtier.text.Plural.count(gc1[0] - gc0[0], "GC pause") + " in it, " + (gc1[1] - gc0[1])
                            + " ms), ms since submit:");
                    RemoteTrace.table().forEach(System.out::println);
                }
                if (e.offload().remoteStats().chunksLoaded() == before) {
                    throw new BadInputException("bench offload: the remote TTFT run loaded nothing from the store: "
                            + e.offload().remoteStats().loadFailures() + " " + e.offload().remoteStats().storesDroppedBy());
                }
                e.drainTransfers();
                run.checkRunning();
                // The same prompt again, its prefix still on the device: the step after the load alone, in this engine.
                RemoteTrace.clear();
                Sample s = time(e, id++, p);
                if (RemoteTrace.ON) {
                    System.out.println("the step alone, repeat " + i + " (" + (s.wall() * 1e3) + " ms):");
                    RemoteTrace.table().forEach(System.out::println);
                }
                if (i > 0) { // the first pair warms both paths up
                    pairs[i - 1] = new Sample[] {r, h, s};
                }
            }
        } finally {
            // The prompts' chunks, written under this run's own tenant, are not left on the server,
            // also when a run failed (the store went away: then this says what is left where). After
            // a signal the hook deletes them once the engine is closed, and says so.
            try {
                if (!run.stopping()) {
                    BenchKeys.deleteTenant(store, tenant);
                }
            } catch (RuntimeException e) {
                System.err.println("kvtier: bench offload: could not delete its keys kvt:v1:" + tenant + ":* from "
                        + RemoteBandwidth.where(store) + " (" + e.getMessage() + ")");
            } finally {
                run.exit();
            }
        }
        System.out.print(report(pairs, RemoteBandwidth.label(store)));
    }

    /**
     * The figures of {@code pairs} (each {recompute, remote, step alone}): medians of each side, the
     * median of the pairs' own ratios and their range, by wall and by process CPU time; the step
     * alone (the prompt once more right after its remote hit, the prefix on the device) with what the
     * remote hit took beyond it (median of the differences). CPU times at {@link ProcessCpu}'s clock.
     */
    static String report(Sample[][] pairs, String where) {
        return report(pairs, where, ProcessCpu.resolutionNanos());
    }

    /**
     * As {@link #report(Sample[][], String)}, with the CPU clock's step: a clock of 1 ms or coarser
     * (the JDK's 10 ms ticks) gives its figures in whole ms and says its step, not "10.00 ms".
     */
    static String report(Sample[][] pairs, String where, long cpuResolutionNanos) {
        double[] rw = new double[pairs.length];
        double[] hw = new double[pairs.length];
        double[] rc = new double[pairs.length];
        double[] hc = new double[pairs.length];
        double[] wallRatio = new double[pairs.length];
        double[] cpuRatio = new double[pairs.length];
        double[] step = new double[pairs.length];
        double[] beyond = new double[pairs.length];
        double[] stepCpu = new double[pairs.length];
        for (int i = 0; i < pairs.length; i++) {
            step[i] = pairs[i][2].wall();
            beyond[i] = pairs[i][1].wall() - step[i];
            stepCpu[i] = pairs[i][2].cpu();
            rw[i] = pairs[i][0].wall();
            hw[i] = pairs[i][1].wall();
            rc[i] = pairs[i][0].cpu();
            hc[i] = pairs[i][1].cpu();
            wallRatio[i] = rw[i] / hw[i];
            cpuRatio[i] = rc[i] / hc[i];
        }
        boolean ticks = cpuResolutionNanos >= 1_000_000;
        String ms = ticks ? "%.0f ms" : "%.2f ms";
        String clock = ticks ? String.format(java.util.Locale.ROOT, "; process CPU in %d ms ticks",
                cpuResolutionNanos / 1_000_000) : "";
        return String.format(java.util.Locale.ROOT,
                "prefix from remote:   %8.2f ms  (%.1fx faster than recompute %.2f ms: median of %s, "
                        + "range %.1f-%.1fx; medians of each side; empty host tier: probe, promotion from %s, load)%n"
                        + "  by process CPU:     %s  (%.1fx less than recompute %s, range %.1f-%.1fx%s)%n"
                        + "  the step alone:     %8.2f ms  (process CPU %s; the prompt again, its prefix on the device); "
                        + "the remote hit beyond it %.2f ms%n",
                Samples.median(hw) * 1e3, Samples.median(wallRatio), Samples.median(rw) * 1e3,
                pairs.length == 1 ? "1 pair's own ratio" : pairs.length + " pairs' own ratios", min(wallRatio), max(wallRatio), where,
                String.format(java.util.Locale.ROOT, "%8" + ms.substring(1), Samples.median(hc) * 1e3), Samples.median(cpuRatio),
                String.format(java.util.Locale.ROOT, ms, Samples.median(rc) * 1e3), min(cpuRatio), max(cpuRatio), clock,
                Samples.median(step) * 1e3, String.format(java.util.Locale.ROOT, ms, Samples.median(stepCpu) * 1e3),
                Samples.median(beyond) * 1e3);
    }

    private static double min(double[] v) {
        return Arrays.stream(v).min().orElse(Double.NaN);
    }

    private static double max(double[] v) {
        return Arrays.stream(v).max().orElse(Double.NaN);
    }

    /** Collections so far and their milliseconds, over every collector of the JVM. */
    private static long[] gcCountAndMillis() {
        long[] out = new long[2];
        for (var gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            out[0] += Math.max(0, gc.getCollectionCount());
            out[1] += Math.max(0, gc.getCollectionTime());
        }
        return out;
    }

    /**
     * {@code prompt} with tokens 1 and 2 made repeat {@code i}'s own, so that nothing of it is in the
     * store yet: ids 3 .. {@code vocab - 1}, distinct for the first {@code (vocab - 3)^2} repeats
     * (65,536 for make-model's smallest vocabulary, 259). {@code 3 + i} alone left a 512-token
     * vocabulary at {@code --repeats} 510 (it may be 1000).
     */
    static int[] promptOfRepeat(int[] prompt, int i, int vocab) {
        int[] p = prompt.clone();
        int ids = vocab - 3;
        p[1] = 3 + i % ids;
        if (p.length > 2) {
            p[2] = 3 + i / ids % ids;
        }
        return p;
    }

    private static Sample time(Engine e, long id, int[] prompt) {
        long c0 = ProcessCpu.nanos();
        long t0 = System.nanoTime();
        RemoteTrace.mark("submit");
        e.submit(new Request(id, prompt, 1, SamplingParams.GREEDY, ExtraKeys.NONE));
        e.runToCompletion();
        return new Sample((System.nanoTime() - t0) / 1e9, (ProcessCpu.nanos() - c0) / 1e9);
    }
}

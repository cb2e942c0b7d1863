package io.kvtier.replay;

import io.kvtier.engine.Engine;
import io.kvtier.engine.Request;
import io.kvtier.engine.SamplingParams;
import io.kvtier.engine.ScheduledChunk;
import io.kvtier.kv.ExtraKeys;
import io.kvtier.offload.OffloadStats;
import io.kvtier.replay.optimum.BeladyOptimum;
import io.kvtier.replay.optimum.Ceiling;
import io.kvtier.replay.optimum.ChunkTrace;
import io.kvtier.replay.optimum.HitRule;
import io.kvtier.replay.trace.Trace;
import io.kvtier.replay.trace.TraceRequest;
import io.kvtier.replay.trace.TraceTokens;
import io.kvtier.tier.HostTier;
import java.util.List;

/**
 * Replays a trace through the production engine with the simulated data plane
 * ({@link ReplayEngine}). Tokens are derived lazily from hash ids ({@link TraceTokens}), one
 * request at submission, so equal hash ids give equal blocks and equal keys.
 *
 * <ul>
 *   <li>Instant mode: each request is submitted alone, run to completion, and its transfers are
 *       drained before the next one: the cache state a request sees is the one all earlier
 *       requests left, as in the offline references ({@link BeladyOptimum}, {@link Ceiling}).</li>
 *   <li>Timed mode: request {@code i} arrives at {@code timestamp_i / speedup} on the
 *       {@link io.kvtier.replay.sim.VirtualClock}; the engine steps while it has work, the clock
 *       advancing by each forward pass's simulated time; when nothing can run it jumps to the next
 *       arrival or transfer completion.</li>
 * </ul>
 */
public final class Replay {

    private Replay() {
    }

    /** Replays {@code trace} with {@code cfg}; {@code progress} is told of each finished request. */
    public static ReplayResult run(Trace trace, ReplayConfig cfg, Progress progress) {
        return run(trace, cfg, progress, null);
    }

    /**
     * As {@link #run(Trace, ReplayConfig, Progress)}, with the offline references precomputed for
     * this trace ({@code chunks}, may be null: computed here when needed).
     */
    public static ReplayResult run(Trace trace, ReplayConfig cfg, Progress progress, ChunkTrace chunks) {
        long t0 = System.nanoTime();
        List<TraceRequest> reqs = trace.requests();
        TimedRecorder timed = cfg.mode() == ReplayConfig.Mode.TIMED ? new TimedRecorder(reqs.size()) : null;
        // Instant mode with KV groups: each request's TTFT alone (its load, then its prefill).
        FirstTokens alone = timed == null && cfg.kvGroups() != null ? new FirstTokens(reqs.size()) : null;
        try (ReplayEngine re = new ReplayEngine(reqs, cfg, timed != null ? timed : alone)) {
            int[] hits = new int[reqs.size()];
            long[] counts = new long[5]; // device, host hit tokens, output tokens, disk, remote hit tokens
            if (timed == null) {
                runInstant(re, reqs, cfg, hits, counts, progress, alone);
            } else {
                runTimed(re, reqs, cfg, hits, counts, progress, timed);
            }
            ReplayResult.Optimum optimum = null;
            if (cfg.mode() == ReplayConfig.Mode.INSTANT && cfg.blockSize() == ChunkTrace.CHUNK_TOKENS) {
                ChunkTrace c = chunks != null ? chunks : ChunkTrace.of(trace);
                long remoteChunks = re.remote == null ? 0 : Math.min(re.remote.capacityChunks(), c.distinctChunks());
                long capacity = (long) re.deviceBlocks + re.hostChunks + re.diskChunks + remoteChunks;
                optimum = new ReplayResult.Optimum(capacity, BeladyOptimum.run(c, capacity, HitRule.ENGINE).hitTokens(),
                        Ceiling.compute(c, HitRule.ENGINE).hitTokens(),
                        re.remote != null && re.remote.capacityChunks() > c.distinctChunks() ? c.distinctChunks() : -1);
            }
            OffloadStats os = re.offload == null ? null : re.offload.stats();
            long stored = os == null ? 0 : os.blocksStored().getOrDefault(HostTier.NAME, 0L);
            long loaded = os == null ? 0 : os.blocksLoaded().getOrDefault(HostTier.NAME, 0L);
            ReplayResult.Timing timing = timed == null ? null : timed.timing(re);
            List<ReplayResult.GroupTraffic> traffic = groupTraffic(re, cfg);
            long bytesStored = 0;
            long bytesLoaded = 0;
            for (ReplayResult.GroupTraffic g : traffic) {
                bytesStored = Math.addExact(bytesStored, g.bytesStored());
                bytesLoaded = Math.addExact(bytesLoaded, g.bytesLoaded());
            }
            ReplayResult.KvTraffic kvTraffic = cfg.kvGroups() == null ? null : new ReplayResult.KvTraffic(cfg.kvGroups(), traffic,
                    timing != null ? timing.ttft() : alone.ttft());
            return new ReplayResult(trace.source(), cfg, re.deviceBlocks, re.hostChunks, reqs.size(), trace.promptTokens(),
                    counts[2], counts[0], counts[1], stored, loaded, re.host == null ? 0 : re.host.index().evictions(),
                    os == null ? 0 : os.storeRefusals(), re.engine.stats().preemptions(), bytesStored,
                    bytesLoaded, hits, optimum, timing, (System.nanoTime() - t0) / 1e9, re.diskChunks, counts[3],
                    os == null ? 0 : os.blocksStored().getOrDefault("disk", 0L), trace.fileRequests(),
                    re.remote == null ? null : new ReplayResult.Remote(re.remote.capacityChunks(), counts[4],
                            os.blocksStored().getOrDefault("remote", 0L), re.transfers.remoteJobs(), re.remote.evictions()),
                    os == null ? java.util.Map.of() : os.blocksNotStored(), os == null ? null : os.loadDecisions(), kvTraffic);
        }
    }

    /** Host-tier blocks stored and loaded by each KV group's offload scheduler, in group order. */
    private static List<ReplayResult.GroupTraffic> groupTraffic(ReplayEngine re, ReplayConfig cfg) {
        List<ReplayResult.GroupTraffic> out = new java.util.ArrayList<>(re.groups.size());
        for (int g = 0; g < re.groups.size(); g++) {
            io.kvtier.kv.KvGroup group = re.groups.get(g);
            OffloadStats os = re.groupOffloads.isEmpty() ? null : re.groupOffloads.get(g).stats();
            out.add(new ReplayResult.GroupTraffic(group.index(), group.window(), group.layers().length,
                    Math.multiplyExact(cfg.blockSize(), cfg.kvBytesPerToken(group)),
                    os == null ? 0 : os.blocksStored().getOrDefault(HostTier.NAME, 0L),
                    os == null ? 0 : os.blocksLoaded().getOrDefault(HostTier.NAME, 0L),
                    os == null ? 0 : os.windowBlocksSkipped()));
        }
        return out;
    }

    private static Request request(int i, TraceRequest tr, ReplayConfig cfg) {
        return new Request(i, TraceTokens.DEFAULT.promptTokens(tr), cfg.outputTokens(tr), SamplingParams.GREEDY,
                ExtraKeys.NONE);
    }

    /**
     * Records a finished request's hits: in instant mode the engine's own counts; in timed mode the
     * position its first forward pass started from ({@code firstStart}), so that a preempted
     * request's reloads of its own blocks are not counted as hits again (device part first, as
     * the engine looks up the device before the host).
     */
    private static void account(Request r, int[] hits, long[] counts, int firstStart) {
        long device = r.deviceHitTokens();
        long host = r.externalHitTokens().getOrDefault(HostTier.NAME, 0);
        long disk = r.externalHitTokens().getOrDefault("disk", 0);
        long remote = r.externalHitTokens().getOrDefault("remote", 0);
        if (firstStart >= 0) {
            device = Math.min(device, firstStart);
            disk = Math.min(disk, firstStart - device);
            remote = Math.min(remote, firstStart - device - disk);
            host = firstStart - device - disk - remote;
        }
        hits[(int) r.id()] = (int) (device + host + disk + remote);
        counts[0] += device;
        counts[1] += host;
        counts[2] += r.numOutputTokens();
        counts[3] += disk;
        counts[4] += remote;
    }

    private static void runInstant(ReplayEngine re, List<TraceRequest> reqs, ReplayConfig cfg, int[] hits,
                                   long[] counts, Progress progress, FirstTokens alone) {
        Engine engine = re.engine;
        for (int i = 0; i < reqs.size(); i++) {
            Request r = request(i, reqs.get(i), cfg);
            if (alone != null) {
                alone.submitted(i, re.clock.nanoTime());
            }
            engine.submit(r);
            engine.runToCompletion();
            engine.drainTransfers();
            account(r, hits, counts, -1);
            progress.step(1);
        }
    }

    private static void runTimed(ReplayEngine re, List<TraceRequest> reqs, ReplayConfig cfg, int[] hits, long[] counts,
                                 Progress progress, TimedRecorder rec) {
        Engine engine = re.engine;
        int next = 0;
        while (next < reqs.size() || engine.hasWork()) {
            long now = re.clock.nanoTime();
            while (next < reqs.size() && arrival(reqs.get(next), cfg) <= now) {
                rec.arrived(next, arrival(reqs.get(next), cfg));
                engine.submit(request(next, reqs.get(next), cfg));
                next++;
            }
            if (!engine.hasWork()) {
                // Idle until the next arrival, but transfers in flight end meanwhile and are applied
                // then (a host store's write-through starts), as the engine's background would.
                long arrives = arrival(reqs.get(next), cfg);
                long ends = re.nextTransferNanos();
                re.clock.advanceTo(Math.min(arrives, ends));
                if (ends < arrives) {
                    engine.step();
                }
                continue;
            }
            long steps = engine.stats().steps();
            List<Request> done = engine.step();
            long end = re.clock.nanoTime();
            for (Request r : done) {
                rec.finished((int) r.id(), end);
                account(r, hits, counts, rec.firstStart((int) r.id()));
            }
            progress.step(done.size());
            if (engine.stats().steps() != steps) {
                rec.stepped(engine.scheduler().waiting().size());
                continue;
            }
            // Nothing could run: wait for the next transfer completion or arrival.
            long wake = re.nextTransferNanos();
            if (next < reqs.size()) {
                wake = Math.min(wake, arrival(reqs.get(next), cfg));
            }
            if (wake == Long.MAX_VALUE) {
                if (!done.isEmpty()) {
                    continue;
                }
                throw new IllegalStateException("replay stalled at " + end + " ns: " + engine.scheduler().waiting().size()
                        + " waiting, " + engine.scheduler().running().size() + " running, nothing in flight");
            }
            re.clock.advanceTo(Math.max(wake, end + 1));
        }
        engine.drainTransfers();
    }

    /** Arrival of a trace request on the virtual clock, ns. */
    static long arrival(TraceRequest r, ReplayConfig cfg) {
        double ns = r.timestampMs() * 1e6 / cfg.speedup();
        if (!(ns < Long.MAX_VALUE / 4)) { // the CLI refuses such a speedup; the clock must never saturate silently
            throw new IllegalArgumentException("speedup " + cfg.speedup() + " puts an arrival at " + ns / 1e9
                    + " s of simulated time, beyond the virtual clock's range");
        }
        return Math.round(ns);
    }

    /**
     * TTFT of each request of an instant replay, which runs alone: from its submission to the end
     * of the forward pass that samples its first token (a load it waits for included).
     */
    private static final class FirstTokens implements io.kvtier.replay.sim.SimulatedModelRunner.Listener {
        private final long[] submitted;
        private final ExactPercentiles ttft = new ExactPercentiles();
        private final boolean[] seen;

        FirstTokens(int n) {
            submitted = new long[n];
            seen = new boolean[n];
        }

        void submitted(int i, long t) {
            submitted[i] = t;
        }

        @Override
        public void onForward(List<ScheduledChunk> chunks, long startNanos, long endNanos) {
            for (ScheduledChunk c : chunks) {
                int i = (int) c.requestId();
                if (c.wantLogits() && !seen[i]) {
                    seen[i] = true;
                    ttft.record(Math.max(0, endNanos - submitted[i]));
                }
            }
        }

        ReplayResult.Percentiles ttft() {
            return ttft.seconds();
        }
    }

    /** Per-request times of a timed replay, from the runner's forward passes and the driver. */
    private static final class TimedRecorder implements io.kvtier.replay.sim.SimulatedModelRunner.Listener {
        private final long[] arrival;
        private final long[] firstServed;
        private final long[] firstToken;
        private final int[] firstStart;
        private final long[] ttftNanos;
        private final long[] e2eNanos;
        private final ExactPercentiles ttft = new ExactPercentiles();
        private final ExactPercentiles e2e = new ExactPercentiles();
        private final ExactPercentiles queue = new ExactPercentiles();
        private long firstArrival = Long.MAX_VALUE;
        private long lastFinish;
        private long steps;
        private long waitingSum;
        private int maxWaiting;

        TimedRecorder(int n) {
            arrival = new long[n];
            firstServed = new long[n];
            firstToken = new long[n];
            firstStart = new int[n];
            ttftNanos = new long[n];
            e2eNanos = new long[n];
            java.util.Arrays.fill(firstServed, -1);
            java.util.Arrays.fill(firstToken, -1);
        }

        void arrived(int i, long t) {
            arrival[i] = t;
            firstArrival = Math.min(firstArrival, t);
        }

        @Override
        public void onForward(List<ScheduledChunk> chunks, long startNanos, long endNanos) {
            for (ScheduledChunk c : chunks) {
                int i = (int) c.requestId();
                if (firstServed[i] < 0) {
                    firstServed[i] = startNanos;
                    firstStart[i] = c.startPos();
                }
                if (c.wantLogits() && firstToken[i] < 0) {
                    firstToken[i] = endNanos;
                }
            }
        }

        /** Position the request's first forward pass started from: its prompt tokens hit at first admission. */
        int firstStart(int i) {
            return firstStart[i];
        }

        void finished(int i, long t) {
            ttftNanos[i] = Math.max(0, firstToken[i] - arrival[i]);
            e2eNanos[i] = Math.max(0, t - arrival[i]);
            ttft.record(ttftNanos[i]);
            e2e.record(e2eNanos[i]);
            queue.record(Math.max(0, firstServed[i] - arrival[i]));
            lastFinish = Math.max(lastFinish, t);
        }

        void stepped(int waiting) {
            steps++;
            waitingSum += waiting;
            maxWaiting = Math.max(maxWaiting, waiting);
        }

        ReplayResult.Timing timing(ReplayEngine re) {
            double span = Math.max(1, lastFinish - (firstArrival == Long.MAX_VALUE ? 0 : firstArrival));
            return new ReplayResult.Timing(span / 1e9, steps, ttft.seconds(), e2e.seconds(), queue.seconds(),
                    maxWaiting, steps == 0 ? 0 : (double) waitingSum / steps, re.runner.busyNanos() / span,
                    re.transfers == null ? 0 : re.transfers.storeBusyNanosUntil(lastFinish) / span,
                    re.transfers == null ? 0 : re.transfers.loadBusyNanosUntil(lastFinish) / span, ttftNanos, e2eNanos);
        }
    }
}

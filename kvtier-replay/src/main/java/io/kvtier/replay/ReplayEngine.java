package io.kvtier.replay;

import io.kvtier.engine.Engine;
import io.kvtier.engine.EngineConfig;
import io.kvtier.kv.BlockHasher;
import io.kvtier.kv.BlockPool;
import io.kvtier.kv.KvCacheManager;
import io.kvtier.kv.KvGroup;
import io.kvtier.kv.KvLayout;
import io.kvtier.kv.Namespace;
import io.kvtier.offload.OffloadConfig;
import io.kvtier.offload.OffloadScheduler;
import io.kvtier.replay.sim.SimulatedModelRunner;
import io.kvtier.replay.sim.SimulatedTransferEngine;
import io.kvtier.replay.sim.VirtualClock;
import io.kvtier.replay.trace.TraceRequest;
import io.kvtier.tier.CachePolicy;
import io.kvtier.tier.HostTier;
import io.kvtier.tier.KvEvents;
import java.util.List;

/**
 * The production engine (scheduler, KV cache manager, offload scheduler, host tier bookkeeping)
 * wired to the simulated data plane for one replay, sized for one trace.
 *
 * <p>Memory stays small whatever the simulated model: the device pool is a real {@link BlockPool}
 * of the engine's block count but with a one-layer, one-head, one-float layout (4 KiB per
 * 512-token block), the host tier is its bookkeeping only ({@link HostTier#withoutSlab}); KV bytes
 * are accounted by the cost model's bytes per token.
 */
final class ReplayEngine implements AutoCloseable {

    final VirtualClock clock = new VirtualClock();
    final SimulatedModelRunner runner;
    final SimulatedTransferEngine transfers;
    final HostTier host;
    final OffloadScheduler offload;
    /** The KV groups' offload schedulers in group order (group 0's is {@link #offload}); empty without offloading. */
    final List<OffloadScheduler> groupOffloads;
    /** The KV groups' transfer engines in group order, on shared lanes (group 0's is {@link #transfers}). */
    private final List<SimulatedTransferEngine> groupTransfers;
    /** The window groups' host tiers (group 0's is {@link #host}). */
    private final List<HostTier> windowHosts = new java.util.ArrayList<>();
    /** The simulated model's KV groups (one group of every layer without {@code --kv-groups}). */
    final List<KvGroup> groups;
    final Engine engine;
    /** Device pool size, blocks. */
    final int deviceBlocks;
    /** Host tier size, chunks (0 = no offloading). */
    final int hostChunks;
    /** Disk tier chunks (0 = none). */
    final int diskChunks;
    /** The simulated remote store (null = none). */
    final io.kvtier.replay.sim.SimulatedRemoteStore remote;
    /** The simulated model's context, tokens: the cost model's, or the trace's longest request if longer. */
    final int maxPositions;
    /** Step token budget used. */
    final int maxBatchTokens;

    /** Deadline of a simulated remote operation (virtual time; a job gets twice that). */
    static final java.time.Duration REMOTE_TIMEOUT = java.time.Duration.ofSeconds(1);
    /** How long a probe's answer is trusted (virtual time), as the engine's default. */
    static final java.time.Duration REMOTE_HINT_TTL = java.time.Duration.ofSeconds(2);

    ReplayEngine(List<TraceRequest> trace, ReplayConfig cfg, SimulatedModelRunner.Listener listener) {
        int bs = cfg.blockSize();
        long longest = 0;
        int longestPrompt = 1;
        long promptBlocks = 0;
        for (TraceRequest r : trace) {
            longest = Math.max(longest, (long) r.inputLength() + cfg.outputTokens(r));
            longestPrompt = Math.max(longestPrompt, r.inputLength());
            promptBlocks += (r.inputLength() + bs - 1) / bs;
        }
        if (longest > ReplayConfig.MAX_CONTEXT_TOKENS) {
            // The CLI refuses such a line naming it (ReplayConfig.contextFault); this guards other callers.
            throw new IllegalArgumentException("the trace's longest request needs " + longest + " tokens, more than the longest "
                    + "context a replay simulates (" + ReplayConfig.MAX_CONTEXT_TOKENS + ")");
        }
        maxPositions = (int) Math.max(cfg.cost().contextTokens(), longest);
        KvLayout layout = new KvLayout(1, 1, 1, bs);
        // Positions a request may need: every one but the last sampled token's (as Engine.submit counts).
        int minBlocks = layout.blocksFor(Math.min(longest - 1, maxPositions));
        deviceBlocks = switch (cfg.device().kind()) {
            case MIN -> minBlocks;
            case INF -> (int) Math.min(Integer.MAX_VALUE, promptBlocks + minBlocks);
            case TOKENS -> {
                long blocks = cfg.device().blocks(bs);
                if (blocks < minBlocks) {
                    throw new IllegalArgumentException("--device-tokens " + cfg.device() + " holds " + io.kvtier.text.Plural.count(blocks, "block") + " of " + bs
                            + " tokens, but the trace's longest request needs " + minBlocks + " (" + (long) minBlocks * bs
                            + " tokens); give at least that, or 'min'");
                }
                yield (int) Math.min(Integer.MAX_VALUE, blocks);
            }
        };
        // Prompt-only offloading stores at most every block that holds a prompt token.
        hostChunks = switch (cfg.host().kind()) {
            case INF -> (int) Math.min(Integer.MAX_VALUE, Math.max(1, promptBlocks));
            case TOKENS -> (int) Math.min(Integer.MAX_VALUE, cfg.host().blocks(bs));
            case MIN -> throw Capacity.deviceOnly("--host-cache-tokens");
        };
        diskChunks = hostChunks == 0 ? 0 : switch (cfg.disk().kind()) {
            case INF -> (int) Math.min(Integer.MAX_VALUE, Math.max(1, promptBlocks));
            case TOKENS -> (int) Math.min(Integer.MAX_VALUE, cfg.disk().blocks(bs));
            case MIN -> throw Capacity.deviceOnly("--disk-cache-tokens");
        };
        remote = hostChunks == 0 || !cfg.remote().enabled() ? null : new io.kvtier.replay.sim.SimulatedRemoteStore(
                switch (cfg.remote().capacity().kind()) {
                    case INF -> Long.MAX_VALUE;
                    case TOKENS -> Math.max(1, cfg.remote().capacity().blocks(bs));
                    case MIN -> throw Capacity.deviceOnly("--remote-cache-tokens");
                }, cfg.remote().latencyNanos(), cfg.remote().bytesPerSecond());
        maxBatchTokens = cfg.maxBatchTokens() > 0 ? cfg.maxBatchTokens()
                : cfg.mode() == ReplayConfig.Mode.INSTANT ? longestPrompt : ReplayConfig.TIMED_MAX_BATCH_TOKENS;
        EngineConfig ec = new EngineConfig(bs, deviceBlocks, maxBatchTokens, cfg.maxRunning(), true, -1);
        runner = new SimulatedModelRunner(cfg.cost(), clock, maxPositions, listener);
        Namespace ns = Namespace.of("replay/" + cfg.cost().name(), layout);
        groups = cfg.kvGroups() == null ? List.of(KvCacheManager.allLayers(layout)) : cfg.kvGroups().groups();
        BlockPool pool = new BlockPool(deviceBlocks, layout);
        if (hostChunks > 0) {
            SimulatedTransferEngine lanes = new SimulatedTransferEngine(cfg.cost(), clock, bs, remote);
            transfers = groups.size() == 1 ? lanes : lanes.sharingLanes(cfg.kvBytesPerToken(groups.getFirst()));
            host = HostTier.withoutSlab(hostChunks, CachePolicy.named(cfg.policy().evictionPolicy(), hostChunks),
                    KvEvents.discarding());
            // The disk tier: the real bookkeeping and write-through chain, files simulated by the transfer engine.
            io.kvtier.offload.DiskTierParts disk = diskChunks == 0 ? null : new io.kvtier.offload.DiskTierParts(
                    new io.kvtier.tier.TierIndex("disk", diskChunks, CachePolicy.behindHost(cfg.policy().evictionPolicy(), diskChunks),
                            KvEvents.discarding()), null, null, io.kvtier.offload.DiskWritePolicy.THROUGH, 1);
            // The remote tier: the real RemoteChain (probes, hints, promotion, write-through), the store
            // simulated by the transfer engine. No byte budget: the lane's time is the cost of a write.
            io.kvtier.offload.RemoteTierParts remoteParts = remote == null ? null : new io.kvtier.offload.RemoteTierParts(null, null,
                    io.kvtier.offload.DiskWritePolicy.THROUGH, 1, Long.MAX_VALUE / 4, REMOTE_TIMEOUT, REMOTE_HINT_TTL);
            offload = new OffloadScheduler(OffloadConfig.DEFAULT.withHostAdmitAfter(cfg.policy().admitAfter())
                    .withStorePolicy(cfg.storePolicy()).withLoadPolicy(cfg.loadPolicy()), pool, host,
                    transfers, ns, disk, remoteParts);
            groupTransfers = new java.util.ArrayList<>(List.of(transfers));
            groupOffloads = new java.util.ArrayList<>(List.of(offload));
        } else {
            transfers = null;
            host = null;
            offload = null;
            groupTransfers = List.of();
            groupOffloads = List.of();
        }
        if (groups.size() == 1) {
            engine = new Engine(ec, pool, runner, BlockHasher.sha256(ns), offload);
            return;
        }
        // Hybrid model: a device pool and (with a host tier) an offload part per window group, as
        // LlamaRunner.engine and OffloadSetup.build make them; every group's host part holds
        // hostChunks blocks (the host bytes split by the groups' bytes per block).
        List<BlockPool> pools = new java.util.ArrayList<>(List.of(pool));
        for (int g = 1; g < groups.size(); g++) {
            pools.add(new BlockPool(deviceBlocks, layout));
            if (offload != null) {
                KvGroup group = groups.get(g);
                SimulatedTransferEngine t = transfers.sharingLanes(cfg.kvBytesPerToken(group));
                HostTier h = HostTier.withoutSlab(hostChunks, CachePolicy.named(cfg.policy().evictionPolicy(), hostChunks),
                        KvEvents.discarding());
                windowHosts.add(h);
                groupTransfers.add(t);
                groupOffloads.add(new OffloadScheduler(OffloadConfig.DEFAULT.withHostAdmitAfter(cfg.policy().admitAfter())
                        .withStorePolicy(cfg.storePolicy()).withLoadPolicy(cfg.loadPolicy()), pools.get(g), h, t,
                        new Namespace(ns.description() + "|group=" + group, group.key(ns.digest()), ns.blocksPerChunk()),
                        null, null, group));
            }
        }
        if (offload != null) {
            OffloadScheduler.ofGroups(offload, groupOffloads.subList(1, groupOffloads.size()));
        }
        engine = new Engine(ec, new KvCacheManager(groups, pools, true), runner, BlockHasher.sha256(ns), offload, null);
    }

    /** Simulated time at which the next transfer of any KV group completes ({@link Long#MAX_VALUE}: none in flight). */
    long nextTransferNanos() {
        long t = Long.MAX_VALUE;
        for (SimulatedTransferEngine e : groupTransfers) {
            t = Math.min(t, e.nextCompletionNanos());
        }
        return t;
    }

    @Override
    public void close() {
        groupTransfers.forEach(SimulatedTransferEngine::close);
        engine.close();
        if (host != null) {
            host.close();
        }
        windowHosts.forEach(HostTier::close);
    }
}

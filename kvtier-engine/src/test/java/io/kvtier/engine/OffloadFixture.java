package io.kvtier.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.kv.BlockHasher;
import io.kvtier.kv.BlockKey;
import io.kvtier.kv.BlockPool;
import io.kvtier.kv.ExtraKeys;
import io.kvtier.kv.KvLayout;
import io.kvtier.kv.Namespace;
import io.kvtier.offload.OffloadConfig;
import io.kvtier.offload.OffloadScheduler;
import io.kvtier.offload.transfer.ChunkCopier;
import io.kvtier.offload.transfer.FaultInjectingTransferEngine;
import io.kvtier.tier.CachePolicy;
import io.kvtier.tier.HostTier;
import io.kvtier.tier.KvEvents;
import io.kvtier.tier.TierIndex;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * An engine on the fingerprint model with a host tier and a {@link FaultInjectingTransferEngine},
 * and the checks of ACCEPTANCE's invariants after every step.
 */
final class OffloadFixture extends CheckedEngineFixture {

    final KvLayout layout;
    final BlockPool pool;
    final HostTier host;
    final KvEvents events = KvEvents.buffered();
    /** The fake transfer engine (null for a fixture with a disk tier, which runs the real one). */
    final FaultInjectingTransferEngine transfers;
    final io.kvtier.offload.transfer.TransferEngine transferEngine;
    final OffloadScheduler offload;
    final Engine engine;
    final int blocksPerChunk;
    /** Every full-chunk key of every submitted request -> (tokens of its prefix, chunk index). */
    private final Map<BlockKey, int[]> prefixOf = new HashMap<>();
    private final Map<BlockKey, Integer> chunkIndexOf = new HashMap<>();
    /** Every full-block key -> (tokens of its prefix, block index), for the device prefix cache check. */
    private final Map<BlockKey, int[]> blockPrefixOf = new HashMap<>();
    private final Map<BlockKey, Integer> blockIndexOf = new HashMap<>();
    /** Keys whose stored bytes a test damaged on purpose: exempt from the bytes check. */
    private final java.util.Set<BlockKey> damaged = new java.util.HashSet<>();
    /** Check stored bytes every this many steps (1 = every step). */
    int bytesCheckEvery = 1;
    private long stepsChecked;

    OffloadFixture(int blockSize, int deviceBlocks, int hostChunks, OffloadConfig config) {
        this(FingerprintEngines.config(blockSize, deviceBlocks), hostChunks, config, "lru");
    }

    OffloadFixture(EngineConfig engineConfig, int hostChunks, OffloadConfig config, String policy) {
        this(engineConfig, hostChunks, config, policy, null);
    }

    /** @param hasher null for the real SHA-256 hasher; a test hasher (e.g. one that collides) otherwise */
    OffloadFixture(EngineConfig engineConfig, int hostChunks, OffloadConfig config, String policy, BlockHasher hasher) {
        this(engineConfig, hostChunks, config, policy, hasher, null, 0, io.kvtier.offload.DiskWritePolicy.THROUGH, null, null, 0);
    }

    /**
     * With a disk tier of {@code diskChunks} chunks in {@code diskDir} behind the host tier, and the
     * real {@link io.kvtier.offload.transfer.AsyncTransferEngine} (disk faults go into the files).
     */
    static OffloadFixture withDisk(EngineConfig engineConfig, int hostChunks, OffloadConfig config, java.nio.file.Path diskDir,
                                   int diskChunks, io.kvtier.offload.DiskWritePolicy policy) {
        return withDisk(engineConfig, hostChunks, config, diskDir, diskChunks, policy, null);
    }

    /** {@link #withDisk} whose restart scan is {@code scan} (null: a real scan of {@code diskDir}). */
    static OffloadFixture withDisk(EngineConfig engineConfig, int hostChunks, OffloadConfig config, java.nio.file.Path diskDir,
                                   int diskChunks, io.kvtier.offload.DiskWritePolicy policy, io.kvtier.tier.disk.RestartScan scan) {
        return new OffloadFixture(engineConfig, hostChunks, config, "lru", null, diskDir, diskChunks, policy, scan, null, 0);
    }

    /**
     * With a remote tier on a real Redis behind the host tier (write-through, admitted at once),
     * and the real {@link io.kvtier.offload.transfer.AsyncTransferEngine} (store faults go into the server).
     */
    static OffloadFixture withRemote(EngineConfig engineConfig, int hostChunks, OffloadConfig config, String policy,
                                     io.kvtier.tier.remote.RemoteSettings remote, long maxBytesInFlight) {
        return new OffloadFixture(engineConfig, hostChunks, config, policy, null, null, 0, io.kvtier.offload.DiskWritePolicy.THROUGH,
                null, remote, maxBytesInFlight);
    }

    /** The remote tier's keys (null without one). */
    final io.kvtier.tier.remote.RemoteKeys remoteKeys;
    /** Lines the remote tier printed when it turned itself off (none expected). */
    final List<String> remoteWarnings = new java.util.concurrent.CopyOnWriteArrayList<>();

    private OffloadFixture(EngineConfig engineConfig, int hostChunks, OffloadConfig config, String policy, BlockHasher hasher,
                           java.nio.file.Path diskDir, int diskChunks, io.kvtier.offload.DiskWritePolicy diskPolicy,
                           io.kvtier.tier.disk.RestartScan diskScan, io.kvtier.tier.remote.RemoteSettings remote,
                           long remoteBytesInFlight) {
        this.layout = FingerprintModelRunner.layout(engineConfig.blockSize());
        this.blocksPerChunk = config.blocksPerChunk();
        this.pool = new BlockPool(engineConfig.deviceBlocks(), layout);
        this.host = new HostTier(hostChunks, blocksPerChunk * layout.bytesPerBlock(), blocksPerChunk * layout.blockSize(),
                CachePolicy.named(policy, hostChunks), events);
        Namespace ns = Namespace.of("fingerprint", layout, config.blocksPerChunk());
        ChunkCopier copier = new ChunkCopier(pool.slab(), layout.bytesPerBlock(), host.slab());
        this.remoteKeys = remote == null ? null : new io.kvtier.tier.remote.RemoteKeys(remote.tenant(), ns.digest());
        if (remote != null) {
            var store = io.kvtier.tier.remote.LettuceRemoteStore.open(remote, remoteWarnings::add);
            this.transfers = null;
            this.transferEngine = new io.kvtier.offload.transfer.AsyncTransferEngine(copier, null,
                    new io.kvtier.offload.transfer.RemoteCopier(host.slab(), store, remoteKeys, layout.bytesPerBlock()));
            this.offload = new OffloadScheduler(config, pool, host, transferEngine, ns, null,
                    new io.kvtier.offload.RemoteTierParts(store, remoteKeys, io.kvtier.offload.DiskWritePolicy.THROUGH, 1,
                            remoteBytesInFlight, remote.timeout(), java.time.Duration.ofSeconds(2)));
        } else if (diskDir == null) {
            this.transfers = new FaultInjectingTransferEngine(copier);
            this.transferEngine = transfers;
            this.offload = new OffloadScheduler(config, pool, host, transfers, ns);
        } else {
            io.kvtier.tier.disk.DiskStore store;
            try {
                store = io.kvtier.tier.disk.DiskStore.open(diskDir, ns.digest(), io.kvtier.tier.disk.DiskFsync.NONE);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            this.transfers = null;
            this.transferEngine = new io.kvtier.offload.transfer.AsyncTransferEngine(copier,
                    new io.kvtier.offload.transfer.DiskCopier(host.slab(), store, layout.bytesPerBlock()));
            TierIndex diskIndex = new TierIndex("disk", diskChunks, CachePolicy.named("lru", diskChunks), events);
            var scan = diskScan != null ? diskScan : io.kvtier.tier.disk.DiskIndexScan.start(store, 1, p -> { });
            this.offload = new OffloadScheduler(config, pool, host, transferEngine, ns,
                    new io.kvtier.offload.DiskTierParts(diskIndex, store, scan, diskPolicy, 1));
        }
        FingerprintModelRunner runner = new FingerprintModelRunner(pool, FingerprintEngines.VOCAB, FingerprintEngines.MAX_POSITIONS);
        this.engine = new Engine(engineConfig, pool, runner, hasher != null ? hasher : BlockHasher.sha256(ns), offload);
    }

    static OffloadConfig chunks(int blocksPerChunk) {
        return OffloadConfig.DEFAULT.withBlocksPerChunk(blocksPerChunk);
    }

    Request submit(int[] prompt, int maxTokens, String salt) {
        return submitWithKeys(prompt, maxTokens, ExtraKeys.salt(salt));
    }

    @Override
    Engine engine() {
        return engine;
    }

    @Override
    void submitted(Request r) {
        remember(r);
    }

    @Override
    void stepped(List<Request> done) {
        for (Request r : engine.scheduler().running()) {
            remember(r);
        }
    }

    /** Lets every held job go and drops every fault rule (holds included). */
    void releaseEverything() {
        transfers.clearFaults();
        transfers.releaseAll();
    }

    /** Marks a key whose stored bytes the test damages on purpose. */
    void damaged(BlockKey key) {
        damaged.add(key);
    }

    /**
     * A test damaged the bytes of a slot: whatever key lives there now is exempt from the bytes
     * check (a later store into the slot writes a key that is checked again).
     */
    void damagedSlot(int slot) {
        for (BlockKey k : prefixOf.keySet()) {
            TierIndex.EntryState s = host.index().state(k);
            if (s != TierIndex.EntryState.ABSENT && s != TierIndex.EntryState.STORING && host.index().slotOf(k) == slot) {
                damaged.add(k);
            }
        }
    }

    /** The key's stored bytes are expected to be right again (e.g. stored anew). */
    void repaired(BlockKey key) {
        damaged.remove(key);
    }

    private void remember(Request r) {
        int c = blocksPerChunk;
        int[] tokens = r.tokens(0, r.numTokens());
        for (int b = 0; b < r.blockKeys().size(); b++) {
            blockPrefixOf.putIfAbsent(r.blockKeys().get(b), tokens);
            blockIndexOf.putIfAbsent(r.blockKeys().get(b), b);
        }
        for (int j = 0; (j + 1) * c <= r.blockKeys().size(); j++) {
            BlockKey k = r.blockKeys().get((j + 1) * c - 1);
            prefixOf.putIfAbsent(k, tokens);
            chunkIndexOf.putIfAbsent(k, j);
        }
    }

    /** ACCEPTANCE's per-step invariants. */
    @Override
    void checkInvariants() {
        pool.checkInvariants();
        offload.checkInvariants();
        TierIndex idx = host.index();
        assertThat(idx.freeSlots() + idx.readyCount() + idx.pinnedCount() + idx.storingCount()).isEqualTo(idx.capacity());
        for (Request r : engine.scheduler().loading().values()) {
            assertThat(engine.scheduler().running()).doesNotContain(r);
        }
        if (++stepsChecked % bytesCheckEvery != 0) {
            return;
        }
        // The device prefix cache maps a key only to a block holding that key's KV.
        for (int b = 0; b < pool.numBlocks(); b++) {
            BlockKey k = pool.keyOf(b);
            if (k != null && blockPrefixOf.containsKey(k) && !damaged.contains(k)) {
                byte[] want = FingerprintModelRunner.expectedChunk(layout, blockPrefixOf.get(k), blockIndexOf.get(k), 1);
                assertThat(pool.block(b).toArray(ValueLayout.JAVA_BYTE)).as("device block %d cached as %s", b, k.shortHex())
                        .isEqualTo(want);
            }
        }
        for (Map.Entry<BlockKey, int[]> e : prefixOf.entrySet()) {
            TierIndex.EntryState s = idx.state(e.getKey());
            if (damaged.contains(e.getKey())) {
                continue;
            }
            if (s == TierIndex.EntryState.READY || s == TierIndex.EntryState.LOADING) {
                int chunk = chunkIndexOf.get(e.getKey());
                byte[] want = FingerprintModelRunner.expectedChunk(layout, e.getValue(), chunk * blocksPerChunk, blocksPerChunk);
                MemorySegment got = host.slab().payloadOf(idx.slotOf(e.getKey()), want.length);
                assertThat(got.toArray(ValueLayout.JAVA_BYTE)).as("bytes of ready host entry %s", e.getKey().shortHex())
                        .isEqualTo(want);
            }
        }
        for (Request r : engine.scheduler().running()) {
            assertThat(r.numComputed()).isLessThanOrEqualTo(r.numTokens());
        }
    }

    /** After a drain: nothing held, every free count equals capacity minus cached. */
    void assertDrained() {
        assertThat(engine.hasWork()).isFalse();
        assertThat(offload.jobsInFlight()).isZero();
        assertThat(transferEngine.inFlight()).isZero();
        assertThat(pool.freeCount()).isEqualTo(pool.numBlocks());
        assertThat(pool.emptyCount()).isEqualTo(pool.numBlocks() - pool.cachedCount());
        TierIndex idx = host.index();
        assertThat(idx.freeSlots()).isEqualTo(idx.capacity() - idx.readyCount());
        assertThat(idx.pinnedCount()).isZero();
        assertThat(idx.storingCount()).isZero();
        assertThat(engine.kvCacheManager().activeRequests()).isZero();
    }

    long computedTokens() {
        return engine.stats().computedTokens();
    }
}

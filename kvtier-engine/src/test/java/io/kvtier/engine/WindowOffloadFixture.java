package io.kvtier.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.kv.BlockHasher;
import io.kvtier.kv.BlockKey;
import io.kvtier.kv.BlockPool;
import io.kvtier.kv.ExtraKeys;
import io.kvtier.kv.KvCacheManager;
import io.kvtier.kv.KvGroup;
import io.kvtier.kv.KvGroups;
import io.kvtier.kv.Namespace;
import io.kvtier.offload.OffloadConfig;
import io.kvtier.offload.OffloadScheduler;
import io.kvtier.offload.transfer.ChunkCopier;
import io.kvtier.offload.transfer.ChunkCopy;
import io.kvtier.offload.transfer.FaultInjectingTransferEngine;
import io.kvtier.offload.transfer.StoreJob;
import io.kvtier.offload.transfer.TransferJob;
import io.kvtier.tier.CachePolicy;
import io.kvtier.tier.HostTier;
import io.kvtier.tier.KvEvents;
import io.kvtier.tier.TierIndex;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * An engine on the {@link WindowFingerprintRunner} with two KV groups — group 0 full attention
 * (one layer), group 1 a sliding window of {@code window} positions (two layers, so its blocks are
 * twice group 0's) — each with its own host tier and {@link FaultInjectingTransferEngine}; and the
 * checks of ACCEPTANCE's invariants per group after every step, plus the window rule: no store job
 * of the window group copies a block that left the window of its request's next query.
 */
final class WindowOffloadFixture extends CheckedEngineFixture {

    final List<KvGroup> groups;
    final List<BlockPool> pools = new ArrayList<>();
    final List<HostTier> hosts = new ArrayList<>();
    final List<FaultInjectingTransferEngine> transfers = new ArrayList<>();
    final OffloadScheduler offload;
    final Engine engine;
    final int blockSize;
    final int chunk;
    private final EngineConfig config;
    private final List<Request> requests = new ArrayList<>();
    /** Per group: chunk key -> (tokens of a sequence it belongs to, chunk index). */
    private final List<Map<BlockKey, int[]>> prefixOf = List.of(new HashMap<>(), new HashMap<>());
    private final List<Map<BlockKey, Integer>> chunkOf = List.of(new HashMap<>(), new HashMap<>());
    /** Window group's chunk key -> the requests holding it. */
    private final Map<BlockKey, List<Request>> owners = new HashMap<>();
    private final java.util.Set<BlockKey> damaged = new java.util.HashSet<>();
    private final int[] jobsChecked = new int[2];
    /** Window-group store jobs checked against the window rule. */
    long windowStoresChecked;

    WindowOffloadFixture(int blockSize, int window, int deviceBlocks, int maxBatchTokens, int hostChunks, OffloadConfig oc) {
        this(blockSize, window, FingerprintEngines.config(blockSize, deviceBlocks).withMaxBatchTokens(maxBatchTokens), hostChunks, oc, "lru");
    }

    WindowOffloadFixture(int blockSize, int window, EngineConfig config, int hostChunks, OffloadConfig oc, String policy) {
        this.blockSize = blockSize;
        this.chunk = oc.blocksPerChunk();
        this.config = config;
        this.groups = KvGroups.of(new int[] {window, window, 0});
        Namespace ns = Namespace.of("window-fingerprint", WindowFingerprintRunner.layout(groups.getFirst(), blockSize), chunk);
        List<OffloadScheduler> parts = new ArrayList<>();
        for (KvGroup g : groups) {
            BlockPool pool = new BlockPool(config.deviceBlocks(), WindowFingerprintRunner.layout(g, blockSize));
            HostTier host = new HostTier(hostChunks, chunk * pool.layout().bytesPerBlock(), chunk * blockSize,
                    CachePolicy.named(policy, hostChunks), KvEvents.discarding());
            FaultInjectingTransferEngine t = new FaultInjectingTransferEngine(
                    new ChunkCopier(pool.slab(), pool.layout().bytesPerBlock(), host.slab()));
            pools.add(pool);
            hosts.add(host);
            transfers.add(t);
            parts.add(g.index() == 0 ? new OffloadScheduler(oc, pool, host, t, ns)
                    : new OffloadScheduler(oc, pool, host, t, new Namespace(ns.description() + "|" + g, g.key(ns.digest()), chunk),
                            null, null, g));
        }
        this.offload = OffloadScheduler.ofGroups(parts.getFirst(), parts.subList(1, parts.size()));
        this.engine = new Engine(config, new KvCacheManager(groups, pools, config.prefixCaching()),
                new WindowFingerprintRunner(groups, pools, FingerprintEngines.VOCAB, FingerprintEngines.MAX_POSITIONS),
                BlockHasher.sha256(ns), offload, null);
    }

    FaultInjectingTransferEngine transfers(int group) {
        return transfers.get(group);
    }

    /** The key group {@code g} stores block {@code i} of {@code r} under. */
    BlockKey key(int g, Request r, int i) {
        return engine.kvCacheManager().cacheKey(g, r.blockKeys().get(i));
    }

    @Override
    Engine engine() {
        return engine;
    }

    @Override
    void submitted(Request r) {
        requests.add(r);
        remember(r);
    }

    @Override
    void stepped(List<Request> done) {
        for (Request r : requests) {
            if (!r.isFinished() || done.contains(r)) {
                remember(r);
            }
        }
    }

    private void remember(Request r) {
        int[] tokens = r.tokens(0, r.numTokens());
        for (int j = 0; (j + 1) * chunk <= r.blockKeys().size(); j++) {
            for (int g = 0; g < groups.size(); g++) {
                BlockKey k = key(g, r, (j + 1) * chunk - 1);
                prefixOf.get(g).putIfAbsent(k, tokens);
                chunkOf.get(g).putIfAbsent(k, j);
                if (g > 0) {
                    List<Request> o = owners.computeIfAbsent(k, x -> new ArrayList<>());
                    if (!o.contains(r)) {
                        o.add(r);
                    }
                }
            }
        }
    }

    /** A test damaged a slot of group {@code g}'s host tier: the key there is exempt from the bytes check. */
    void damagedSlot(int g, int slot) {
        TierIndex idx = hosts.get(g).index();
        for (BlockKey k : prefixOf.get(g).keySet()) {
            TierIndex.EntryState s = idx.state(k);
            if (s != TierIndex.EntryState.ABSENT && s != TierIndex.EntryState.STORING && idx.slotOf(k) == slot) {
                damaged.add(k);
            }
        }
    }

    /** ACCEPTANCE's per-step invariants, in every group, and the window group's store rule. */
    @Override
    void checkInvariants() {
        engine.checkKvInvariants();
        offload.checkInvariants();
        for (Request r : engine.scheduler().loading().values()) {
            assertThat(engine.scheduler().running()).doesNotContain(r);
        }
        for (int g = 0; g < groups.size(); g++) {
            TierIndex idx = hosts.get(g).index();
            assertThat(idx.freeSlots() + idx.readyCount() + idx.pinnedCount() + idx.storingCount()).isEqualTo(idx.capacity());
            for (Map.Entry<BlockKey, int[]> e : prefixOf.get(g).entrySet()) {
                TierIndex.EntryState s = idx.state(e.getKey());
                if (!damaged.contains(e.getKey()) && (s == TierIndex.EntryState.READY || s == TierIndex.EntryState.LOADING)) {
                    byte[] want = WindowFingerprintRunner.expectedChunk(pools.get(g).layout(), g, e.getValue(),
                            chunkOf.get(g).get(e.getKey()) * chunk, chunk);
                    assertThat(hosts.get(g).slab().payloadOf(idx.slotOf(e.getKey()), want.length).toArray(ValueLayout.JAVA_BYTE))
                            .as("bytes of group %d's ready host entry %s", g, e.getKey().shortHex()).isEqualTo(want);
                }
            }
        }
        checkWindowStores();
    }

    /** Every new store job of the window group copies only chunks whose blocks some request's next query still reads. */
    private void checkWindowStores() {
        List<TransferJob> jobs = transfers.get(1).submitted();
        for (int j = jobsChecked[1]; j < jobs.size(); j++) {
            if (jobs.get(j) instanceof StoreJob store) {
                windowStoresChecked++;
                for (ChunkCopy c : store.chunks()) {
                    int firstBlock = chunkOf.get(1).get(c.key()) * chunk;
                    assertThat(owners.get(c.key())).as("window chunk %s stored after its blocks left the window", c.key().shortHex())
                            .anyMatch(r -> firstBlock >= groups.get(1).firstReadBlock(r.numComputed(), blockSize));
                }
            }
        }
        jobsChecked[1] = jobs.size();
    }

    /** After a drain: nothing held in any group, every tier entry settled. */
    void assertDrained() {
        assertThat(engine.hasWork()).isFalse();
        assertThat(offload.jobsInFlight()).isZero();
        for (int g = 0; g < groups.size(); g++) {
            assertThat(transfers.get(g).inFlight()).isZero();
            BlockPool pool = pools.get(g);
            assertThat(pool.freeCount()).as("group %d free blocks", g).isEqualTo(pool.numBlocks());
            TierIndex idx = hosts.get(g).index();
            assertThat(idx.pinnedCount()).isZero();
            assertThat(idx.storingCount()).isZero();
        }
        assertThat(engine.kvCacheManager().activeRequests()).isZero();
    }

    private final Map<String, int[]> references = new HashMap<>();

    /** The output of the request run alone on the same two groups with every cache off (memoized). */
    int[] reference(int[] prompt, int maxTokens) {
        return references.computeIfAbsent(java.util.Arrays.toString(prompt) + "/" + maxTokens, k -> {
            List<BlockPool> big = new ArrayList<>();
            for (KvGroup g : groups) {
                big.add(new BlockPool(4096, WindowFingerprintRunner.layout(g, blockSize)));
            }
            EngineConfig c = FingerprintEngines.config(blockSize, 4096).withPrefixCaching(false);
            try (Engine e = new Engine(c, new KvCacheManager(groups, big, false),
                    new WindowFingerprintRunner(groups, big, FingerprintEngines.VOCAB, FingerprintEngines.MAX_POSITIONS),
                    BlockHasher.sha256(Namespace.of("reference", big.getFirst().layout())), null, null)) {
                e.submit(new Request(0, prompt, maxTokens, SamplingParams.GREEDY, ExtraKeys.NONE));
                return e.runToCompletion().getFirst().outputIds();
            }
        }).clone();
    }

    /** Every finished request equals its reference (an aborted one, a prefix of it); returns how many were aborted. */
    int assertMatchReferences(List<Request> done) {
        int aborted = 0;
        for (Request r : done) {
            int[] ref = reference(r.promptIds(), r.maxTokens());
            if (r.finishReason() == FinishReason.ABORT) {
                aborted++;
                assertThat(java.util.Arrays.copyOf(ref, Math.min(ref.length, r.numOutputTokens()))).as("aborted request %d", r.id())
                        .containsExactly(r.outputIds());
            } else {
                assertThat(r.outputIds()).as("request %d", r.id()).containsExactly(ref);
            }
        }
        return aborted;
    }
}

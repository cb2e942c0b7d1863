package io.kvtier.offload;

import io.kvtier.kv.BlockKey;
import io.kvtier.offload.transfer.ChunkCopy;
import io.kvtier.offload.transfer.LoadJob;
import io.kvtier.offload.transfer.RemoteJob;
import io.kvtier.offload.transfer.TransferResult;
import io.kvtier.tier.HostTier;
import io.kvtier.tier.TierIndex;
import io.kvtier.tier.TierLookup;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The load side of {@link OffloadScheduler} in one KV group: finds a request's chunks in the
 * tiers beyond its device hit, promotes disk or remote chunks into the host tier, starts load jobs
 * into the request's block table and applies their completions. Engine thread only.
 */
final class HostLoads {

    private final GroupTier t;
    private final HostStores stores;
    private final BlockKey namespace;
    private final int blockSize;
    /**
     * Whether a remote hit is loaded straight through its host slots into the device in one job
     * (its chunks copied to the device as they arrive) rather than promoted first and loaded
     * after. Off for a model with several KV groups, whose groups' loads wait for each other's
     * promotions ({@link WindowParts}).
     */
    private boolean loadThroughStore;

    /** @param loadThroughStore whether remote hits may be loaded straight through ({@link #promoteRemoteHitsFirst}) */
    HostLoads(GroupTier t, HostStores stores, boolean loadThroughStore) {
        this.t = t;
        this.loadThroughStore = loadThroughStore;
        this.stores = stores;
        this.namespace = t.chain().namespace();
        this.blockSize = t.chain().blockSize();
    }

    private int chunk() {
        return t.chain().blocksPerChunk();
    }

    /** {@link OffloadScheduler#lookup} of the chunks from the one holding block {@code deviceHitBlocks} to {@code endChunk} (exclusive). */
    Lookup lookup(SequenceView r, int deviceHitBlocks, int endChunk, long epoch) {
        int firstChunk = deviceHitBlocks / chunk();
        if (endChunk * chunk() <= deviceHitBlocks) {
            return new Lookup.Miss();
        }
        List<BlockKey> keys = new ArrayList<>(endChunk - firstChunk);
        for (int c = firstChunk; c < endChunk; c++) {
            keys.add(t.chain().key(r, c));
        }
        TierLookup found = t.host().index().lookup(keys);
        if (found instanceof TierLookup.Pending) {
            return new Lookup.Wait("a chunk of the prefix is being stored");
        }
        int ready = found.readyChunks();
        for (int i = 0; i < ready; i++) {
            if (t.jobs().loadingJob(keys.get(i)) >= 0) {
                // At most one load per key (§3.5): wait, then hit the device prefix cache.
                return new Lookup.Wait("a chunk of the prefix is being loaded for another request");
            }
        }
        // What a tier behind the host may bring in ends where the host holds a chunk again: a
        // promotion of a run that includes a host chunk is refused (HostPromotion takes exactly the
        // run or nothing), so a hit on a later host chunk used to cost the whole promotion.
        List<BlockKey> rest = keys.subList(ready, ready + absentFromHost(keys.subList(ready, keys.size())));
        if (t.disk() != null && !rest.isEmpty()) {
            int onDisk = t.disk().lookup(rest);
            for (int i = 0; i < onDisk; i++) {
                if (t.jobs().loadingJob(rest.get(i)) >= 0) {
                    return new Lookup.Wait("a chunk of the prefix is being promoted from disk");
                }
            }
            if (onDisk > 0) {
                return new Lookup.Promote(ready, onDisk);
            }
        }
        if (t.remote() != null && !rest.isEmpty()) {
            int inStore = t.remote().lookup(rest, epoch);
            if (io.kvtier.tier.remote.RemoteTrace.ON) {
                io.kvtier.tier.remote.RemoteTrace.mark("lookup: " + ready + " host, remote " + (inStore == RemoteChain.PROBING ? "PROBING" : inStore)
                        + " of " + rest.size());
            }
            if (inStore == RemoteChain.PROBING) {
                return new Lookup.Wait("probing the remote tier");
            }
            for (int i = 0; i < inStore; i++) {
                if (t.jobs().loadingJob(rest.get(i)) >= 0) {
                    return new Lookup.Wait("a chunk of the prefix is being promoted from the remote tier");
                }
            }
            if (inStore > 0) {
                return new Lookup.Promote(ready, 0, inStore);
            }
        }
        int end = (firstChunk + ready) * chunk();
        return end > deviceHitBlocks ? new Lookup.Hit(HostTier.NAME, end - deviceHitBlocks) : new Lookup.Miss();
    }

    /** Leading keys of {@code keys} of which the host tier holds nothing (in no state). */
    private int absentFromHost(List<BlockKey> keys) {
        int n = 0;
        while (n < keys.size() && t.host().index().state(keys.get(n)) == TierIndex.EntryState.ABSENT) {
            n++;
        }
        return n;
    }

    /** Remote hits are promoted into the host tier first, then loaded (a model with several KV groups). */
    void promoteRemoteHitsFirst() {
        loadThroughStore = false;
    }

    private boolean throughStore() {
        return loadThroughStore && t.remote() != null && t.remote().loadsThrough();
    }

    /** {@link OffloadScheduler#promote}; {@code p} with no disk or remote chunks starts nothing. */
    Lookup promote(SequenceView r, int deviceHitBlocks, Lookup.Promote p, long epoch) {
        int firstChunk = deviceHitBlocks / chunk() + p.hostChunks();
        List<BlockKey> hostKeys = new ArrayList<>();
        for (int c = deviceHitBlocks / chunk(); c < firstChunk; c++) {
            hostKeys.add(t.chain().key(r, c));
        }
        List<BlockKey> keys = new ArrayList<>();
        List<BlockKey> parents = new ArrayList<>();
        List<int[]> tokens = new ArrayList<>();
        int behind = p.diskChunks() > 0 ? p.diskChunks() : p.remoteChunks();
        for (int c = firstChunk; c < firstChunk + behind; c++) {
            keys.add(t.chain().key(r, c));
            parents.add(t.chain().parent(r, c));
            tokens.add(t.chain().tokens(r, c));
        }
        boolean fromDisk = p.diskChunks() > 0;
        if (keys.isEmpty()) {
            int end = firstChunk * chunk();
            return end > deviceHitBlocks ? new Lookup.Hit(HostTier.NAME, end - deviceHitBlocks) : new Lookup.Miss();
        }
        if (!fromDisk && throughStore()) {
            // No job yet: the load reserves the host slots and reads the values straight through
            // (start), with the host's chunks that follow them (never evicted for them).
            int after = hostChunksAfter(r, firstChunk + keys.size());
            List<BlockKey> keep = new ArrayList<>(hostKeys);
            for (int c = firstChunk + keys.size(); c < firstChunk + keys.size() + after; c++) {
                keep.add(t.chain().key(r, c));
            }
            int fit = HostPromotion.fitting(t.host(), keep, keys);
            if (fit > 0) {
                if (fit < keys.size()) {
                    t.stats().notStored(OffloadStats.REMOTE_NOT_PROMOTED, (long) (keys.size() - fit) * chunk());
                }
                int end = firstChunk + fit + (fit == keys.size() ? after : 0);
                return new Lookup.Hit(HostTier.NAME, end * chunk() - deviceHitBlocks);
            }
        }
        int started = fromDisk ? t.disk().promote(hostKeys, keys, parents, tokens, namespace, epoch)
                : t.remote().promote(hostKeys, keys, parents, tokens, epoch);
        if (started > 0) {
            return new Lookup.Wait("promoting " + started + " of " + keys.size() + " chunks from "
                    + (fromDisk ? "disk" : "the remote tier"));
        }
        t.stats().notStored(fromDisk ? OffloadStats.NOT_PROMOTED : OffloadStats.REMOTE_NOT_PROMOTED, (long) keys.size() * chunk());
        int end = firstChunk * chunk();
        return end > deviceHitBlocks ? new Lookup.Hit(HostTier.NAME, end - deviceHitBlocks) : new Lookup.Miss();
    }

    /**
     * Chunks of {@code r} from {@code from} on that the host tier holds readable and no other load
     * reads, up to {@link OffloadScheduler#lookup}'s end (the request's last token is computed).
     */
    private int hostChunksAfter(SequenceView r, int from) {
        int end = Math.min((r.numTokens() - 1) / blockSize, r.blockKeys().size()) / chunk();
        int n = 0;
        for (int c = from; c < end; c++, n++) {
            BlockKey k = t.chain().key(r, c);
            if (!readable(k) || t.jobs().loadingJob(k) >= 0) {
                break;
            }
        }
        return n;
    }

    private boolean readable(BlockKey k) {
        TierIndex.EntryState s = t.host().index().state(k);
        return s == TierIndex.EntryState.READY || s == TierIndex.EntryState.LOADING;
    }

    /**
     * {@link OffloadScheduler#startLoad} into {@code blockTable}. Chunks after the host's ready
     * prefix (a remote hit from {@link #promote}) get host slots reserved now and are read from the
     * store by the same job, each copied on into the device once whole and verified; a chunk the
     * host cannot take any more ends the job before it (the load is cut there).
     */
    Map<String, Integer> start(SequenceView r, int deviceHitBlocks, int blocks, int[] blockTable, long epoch) {
        int firstChunk = deviceHitBlocks / chunk();
        int endChunk = (deviceHitBlocks + blocks) / chunk();
        List<BlockKey> keys = new ArrayList<>();
        for (int c = firstChunk; c < endChunk; c++) {
            keys.add(t.chain().key(r, c));
        }
        boolean[] fromStore = new boolean[keys.size()];
        int[] slots = new int[keys.size()];
        if (throughStore()) {
            keys = reserveStoreChunks(r, firstChunk, keys, fromStore, slots);
        }
        List<BlockKey> pinned = new ArrayList<>();
        for (int i = 0; i < keys.size(); i++) {
            if (!fromStore[i]) {
                pinned.add(keys.get(i));
            }
        }
        int[] hostSlots = t.host().index().prepareLoad(pinned);
        for (int i = 0, h = 0; i < keys.size(); i++) {
            if (!fromStore[i]) {
                slots[i] = hostSlots[h++];
            }
        }
        t.host().index().touch(pinned);
        if (t.disk() != null) {
            t.disk().onHostHit(keys, epoch);
            t.disk().touchOnHostHit(keys);
        }
        if (t.remote() != null) {
            t.remote().onHostHit(keys, epoch);
        }
        long id = t.jobs().newId();
        String[] chunkTiers = new String[keys.size()];
        Map<String, Integer> tokensByTier = new TreeMap<>();
        List<ChunkCopy> copies = new ArrayList<>();
        int[] targets = new int[blocks];
        int[] chunkBlocks = new int[keys.size()];
        int next = 0;
        for (int i = 0; i < keys.size(); i++) {
            int c = firstChunk + i;
            int[] dev = new int[chunk()];
            for (int j = 0; j < chunk(); j++) {
                int b = c * chunk() + j;
                // Blocks already on the device (a hit ending inside the chunk) are not copied: -1.
                dev[j] = b < deviceHitBlocks ? -1 : blockTable[b];
                if (dev[j] >= 0) {
                    targets[next++] = dev[j];
                    t.pool().retain(dev[j]);
                    chunkBlocks[i]++;
                }
            }
            copies.add(new ChunkCopy(dev, slots[i], namespace, keys.get(i), t.chain().parent(r, c),
                    t.chain().tokens(r, c)));
            chunkTiers[i] = fromStore[i] ? "remote" : t.disk() != null && t.disk().consumePromoted(keys.get(i)) ? "disk"
                    : t.remote() != null && t.remote().consumePromoted(keys.get(i)) ? "remote" : HostTier.NAME;
            tokensByTier.merge(chunkTiers[i], chunkBlocks[i] * blockSize, Integer::sum);
        }
        long deadline = t.transfers().nanoTime() + t.config().jobDeadline().toNanos();
        int reads = keys.size() - pinned.size();
        if (reads > 0) {
            deadline = Math.max(deadline, t.remote().readDeadline(reads));
        }
        OffloadJob.Load load = new OffloadJob.Load(id, r.id(), HostTier.NAME, deviceHitBlocks, blocks,
                java.util.Arrays.copyOf(targets, next), keys, chunkBlocks, chunkTiers, epoch, deadline, fromStore);
        t.jobs().add(load);
        tokensByTier.forEach((tier, n) -> OffloadStats.add(t.stats().externalHitTokens, tier, n));
        stores.advanceCursor(r.id(), deviceHitBlocks + blocks);
        if (io.kvtier.tier.remote.RemoteTrace.ON) {
            io.kvtier.tier.remote.RemoteTrace.mark("load submitted: " + keys.size() + " chunks, " + reads + " from the store");
        }
        t.transfers().submit(reads > 0 ? new RemoteJob(id, RemoteJob.Kind.LOAD, copies, deadline, invert(fromStore))
                : new LoadJob(id, copies, deadline));
        return tokensByTier;
    }

    private static boolean[] invert(boolean[] marks) {
        boolean[] out = new boolean[marks.length];
        for (int i = 0; i < marks.length; i++) {
            out[i] = !marks[i];
        }
        return out;
    }

    /**
     * Reserves host slots for the chunks of {@code keys} (chunk {@code firstChunk} on) that the host
     * tier does not hold readable, to be read from the remote store: marks them in {@code fromStore}
     * and sets their {@code slots}, never evicting the host chunks of the hit.
     *
     * @return {@code keys} up to the first chunk that got no slot (the load is cut there)
     */
    private List<BlockKey> reserveStoreChunks(SequenceView r, int firstChunk, List<BlockKey> keys, boolean[] fromStore,
                                              int[] slots) {
        List<BlockKey> hostKeys = new ArrayList<>();
        List<BlockKey> storeKeys = new ArrayList<>();
        List<BlockKey> parents = new ArrayList<>();
        List<int[]> tokens = new ArrayList<>();
        List<Integer> at = new ArrayList<>();
        for (int i = 0; i < keys.size(); i++) {
            if (readable(keys.get(i))) {
                hostKeys.add(keys.get(i));
            } else {
                storeKeys.add(keys.get(i));
                parents.add(t.chain().parent(r, firstChunk + i));
                tokens.add(t.chain().tokens(r, firstChunk + i));
                at.add(i);
            }
        }
        if (storeKeys.isEmpty()) {
            return keys;
        }
        HostPromotion.Reserved reserved = HostPromotion.reserve(t.host(), hostKeys, storeKeys, parents, tokens, namespace, chunk());
        int n = reserved == null ? 0 : reserved.count();
        for (int j = 0; j < n; j++) {
            fromStore[at.get(j)] = true;
            slots[at.get(j)] = reserved.copies().get(j).slot();
        }
        return n == storeKeys.size() ? keys : new ArrayList<>(keys.subList(0, at.get(n)));
    }

    /** Ends a load job: the chunks before the first failed one hold verified KV; null for a load no request waits for. */
    LoadDone apply(OffloadJob.Load load, TransferResult res, boolean current) {
        List<BlockKey> keys = load.chunkKeys();
        boolean[] fromStore = load.fromStore();
        int goodChunks = res.success() ? keys.size() : Math.max(0, res.firstFailedChunk());
        List<BlockKey> pinned = new ArrayList<>();
        List<BlockKey> read = new ArrayList<>();
        int readOk = 0;
        for (int i = 0; i < keys.size(); i++) {
            (fromStore[i] ? read : pinned).add(keys.get(i));
            readOk += fromStore[i] && i < goodChunks ? 1 : 0;
        }
        t.host().index().completeLoad(pinned);
        boolean failedInHost = !res.success() && goodChunks < keys.size() && !fromStore[goodChunks];
        if (!read.isEmpty()) {
            // The chunks read from the store: whole in their host slots up to the first failed chunk.
            t.remote().applyRead(read, readOk, res.success() || failedInHost && !res.timedOut() ? null : res, current);
        }
        if (!res.success()) {
            t.stats().loadFailures++;
            // A bad entry is deleted (§3.4), so a retry cannot fail on it again (F04). A timeout
            // says nothing about the bytes: the entry stays.
            if (!res.timedOut() && failedInHost) {
                t.host().index().remove(keys.get(goodChunks));
            }
        }
        if (!current) {
            return null;
        }
        int goodBlocks = 0;
        for (int i = 0; i < goodChunks; i++) {
            goodBlocks += load.chunkBlocks()[i];
        }
        t.stats().blocksLoaded.add(load.tier(), goodBlocks);
        t.stats().bytesLoaded += goodBlocks * t.pool().layout().bytesPerBlock();
        Map<String, Integer> lost = new TreeMap<>();
        for (int i = goodChunks; i < load.chunkKeys().size(); i++) {
            lost.merge(load.chunkTiers()[i], load.chunkBlocks()[i] * blockSize, Integer::sum);
        }
        if (goodBlocks < load.blocks()) {
            // Hit tokens count only what was really loaded.
            lost.forEach((tier, n) -> OffloadStats.add(t.stats().externalHitTokens, tier, -n));
            int loadedEnd = load.firstBlock() + goodBlocks;
            stores.cutCursor(load.requestId(), loadedEnd);
        }
        return new LoadDone(load.requestId(), load.tier(), load.firstBlock(), load.blocks(), goodBlocks, lost);
    }

    /**
     * A cache reset: every live job is orphaned (it keeps its resources until it completes, its
     * result ignored), and every load among them abandoned.
     *
     * @return the abandoned loads, none of whose blocks counts as loaded
     */
    List<LoadDone> abandonAll() {
        List<LoadDone> abandoned = new ArrayList<>();
        for (OffloadJob j : t.jobs().liveJobs()) {
            if (j instanceof OffloadJob.Load load) {
                abandoned.add(abandon(load));
            }
            t.jobs().orphan(j.id());
        }
        return abandoned;
    }

    /** A load abandoned by a cache reset: none of its blocks counts as loaded. */
    private LoadDone abandon(OffloadJob.Load load) {
        Map<String, Integer> lost = new TreeMap<>();
        for (int i = 0; i < load.chunkKeys().size(); i++) {
            lost.merge(load.chunkTiers()[i], load.chunkBlocks()[i] * blockSize, Integer::sum);
        }
        lost.forEach((tier, n) -> OffloadStats.add(t.stats().externalHitTokens, tier, -n));
        return new LoadDone(load.requestId(), load.tier(), load.firstBlock(), load.blocks(), 0, lost);
    }
}

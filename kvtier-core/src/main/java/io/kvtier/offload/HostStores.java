package io.kvtier.offload;

import io.kvtier.kv.BlockKey;
import io.kvtier.kv.BlockPool;
import io.kvtier.kv.LongObjectMap;
import io.kvtier.offload.transfer.ChunkCopy;
import io.kvtier.offload.transfer.TransferEngine;
import io.kvtier.offload.transfer.TransferResult;
import io.kvtier.tier.AdmissionFilter;
import io.kvtier.tier.HostTier;
import io.kvtier.tier.StorePlan;
import io.kvtier.tier.TierIndex;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.LongFunction;

/**
 * The store side of {@link OffloadScheduler}: turns a request's newly written full chunks into
 * one host store job at commit and applies store completions. Owns each request's store cursor
 * (leading blocks stored, being stored or known present). Engine thread only.
 */
final class HostStores {

    private final OffloadConfig config;
    private final ChunkChain chain;
    private final BlockPool pool;
    private final HostTier host;
    private final TransferEngine transfers;
    private final JobRegistry jobs;
    private final OffloadStats stats;
    private final AdmissionFilter admission;
    private final DiskChain disk;
    private final RemoteChain remote;
    /** Request id -> store cursor in blocks (looked up per request per step: no boxing). */
    private final LongIntMap cursors = new LongIntMap();
    /**
     * Request id -> the keys of its chain's leading chunks, grown as its store cursor moves, so
     * that a store does not rebuild the set of every chunk before it (full-attention groups).
     */
    private final LongObjectMap<EarlierChunks> earlier = new LongObjectMap<>();
    /** The step's store job, assembled by the step's commits and started by {@link #submitStep}. */
    private final StoreBatch step;
    /** Reused by every commit's store and {@link #add}: the chunk copies of one request. */
    private final List<ChunkCopy> copies = new ArrayList<>();
    /** Reused by every commit: the keys and parents of the chunks a store may take. */
    private final List<BlockKey> commitKeys = new ArrayList<>();
    private final List<BlockKey> commitParents = new ArrayList<>();
    /** Lazy stores' pending chunks; null when stores are eager. */
    private final LazyStores lazy;
    /** 0 for a full-attention group; else the sliding window (positions) of the group whose blocks this stores. */
    private final int window;

    HostStores(OffloadConfig config, ChunkChain chain, BlockPool pool, HostTier host, TransferEngine transfers,
               JobRegistry jobs, OffloadStats stats, DiskChain disk, RemoteChain remote, int window) {
        this.config = config;
        this.window = window;
        this.chain = chain;
        this.pool = pool;
        this.host = host;
        this.transfers = transfers;
        this.jobs = jobs;
        this.stats = stats;
        this.admission = new AdmissionFilter(config.hostAdmitAfter(), Math.max(1, host.capacity()));
        this.disk = disk;
        this.remote = remote;
        this.step = new StoreBatch(pool, jobs, transfers, config.jobDeadline().toNanos());
        this.lazy = config.storePolicy().lazy() ? new LazyStores(config.storePolicy(), chain, pool, host, stats, this) : null;
    }

    private int chunk() {
        return chain.blocksPerChunk();
    }

    /** See {@link OffloadScheduler#onCommit}. */
    void onCommit(SequenceView r, int kvWritten, LongFunction<int[]> blockTables, long epoch) {
        int toChunk = storableChunks(r, kvWritten);
        int fromChunk = firstChunkToStore(r, kvWritten, toChunk);
        if (toChunk <= fromChunk || jobs.hasLoad(r.id())) {
            return; // the common case of a decode step: nothing new to store, nothing copied
        }
        long t0 = System.nanoTime();
        store(r, fromChunk, toChunk, blockTables, epoch);
        stats.storeDecisionNanos += System.nanoTime() - t0;
    }

    /** {@link #onCommit} with chunks {@code [fromChunk, toChunk)} new: stores what the tier takes of them. */
    private void store(SequenceView r, int fromChunk, int toChunk, LongFunction<int[]> blockTables, long epoch) {
        // A chain is hit from its head: a chunk at index >= capacity can never be in the host tier
        // together with all its parents (and the disk is fed from the host tier). A window group's
        // hit needs only the chunks of its window, wherever they are.
        int fitChunk = window > 0 ? toChunk : Math.min(toChunk, host.capacity());
        // Reused from commit to commit: every callee below reads them during the call only.
        List<BlockKey> keys = commitKeys;
        List<BlockKey> parents = commitParents;
        keys.clear();
        parents.clear();
        boolean admitted = true;
        for (int c = fromChunk; c < fitChunk; c++) {
            // Every chunk's use is recorded; the chain is cut at the first one not admitted
            // (a chunk after a hole could never be hit).
            admitted &= admission.use(chain.key(r, c)) || host.index().state(chain.key(r, c)) != TierIndex.EntryState.ABSENT;
            if (admitted) {
                keys.add(chain.key(r, c));
                parents.add(chain.parent(r, c));
            }
        }
        if (lazy != null) {
            // Stored later, when they near eviction from the device (LazyStores.scan).
            lazy.record(r, fromChunk, keys.size());
            stats.notStored(OffloadStats.NOT_ADMITTED, (long) Math.max(0, fitChunk - fromChunk - keys.size()) * chunk());
            stats.notStored(OffloadStats.LONGER_THAN_HOST, (long) (toChunk - Math.max(fromChunk, fitChunk)) * chunk());
            cursors.put(r.id(), toChunk * chunk());
            return;
        }
        Set<BlockKey> keep = window > 0 ? Set.of() : earlierChunks(r, Math.min(fromChunk, fitChunk));
        int fits = keys.isEmpty() ? 0 : host.index().fittingPrefix(keys, keep);
        if (fits == 0 && !keys.isEmpty()) {
            stats.storeRefusals++; // entries pinned or being stored fill the tier now: retried at the next commit
            return;
        }
        boolean all = fits == keys.size();
        keys = keys.subList(0, fits);
        parents = parents.subList(0, fits);
        StorePlan.Accepted accepted = keys.isEmpty() ? null : accept(keys, parents, keep, epoch);
        if (!keys.isEmpty() && accepted == null) {
            return; // retried at the next commit
        }
        if (all) {
            int skipped = fitChunk - fromChunk - fits;
            stats.notStored(OffloadStats.NOT_ADMITTED, (long) skipped * chunk());
            stats.notStored(OffloadStats.LONGER_THAN_HOST,
                    (long) (toChunk - Math.max(fromChunk, fitChunk)) * chunk());
            cursors.put(r.id(), toChunk * chunk());
        } else {
            cursors.put(r.id(), (fromChunk + fits) * chunk());
        }
        if (accepted == null) {
            return;
        }
        int[] table = blockTables.apply(r.id());
        copies.clear();
        for (int i = 0; i < accepted.toStore().size(); i++) {
            int c = fromChunk + keys.indexOf(accepted.toStore().get(i));
            copies.add(new ChunkCopy(java.util.Arrays.copyOfRange(table, c * chunk(), (c + 1) * chunk()), accepted.slot(i),
                    chain.namespace(), chain.key(r, c), chain.parent(r, c), chain.tokens(r, c)));
        }
        step.add(r.id(), fromChunk, copies);
        copies.clear();
    }

    /** The keys of a request's chunks {@code [0, chunks)}: a store must not evict them to make room. */
    private static final class EarlierChunks {
        final Set<BlockKey> keys = new HashSet<>();
        int chunks;
    }

    /**
     * The keys of chunks {@code [0, upTo)} of {@code r}'s chain, the set a store of later chunks
     * keeps (never evicts): extended from the last call's, rebuilt only when {@code upTo} went
     * back (a cut cursor). Read-only for the caller, and valid until the next call for {@code r}.
     */
    Set<BlockKey> earlierChunks(SequenceView r, int upTo) {
        if (upTo <= 0) {
            return Set.of();
        }
        EarlierChunks e = earlier.get(r.id());
        if (e == null || e.chunks > upTo) {
            e = new EarlierChunks();
            earlier.put(r.id(), e);
        }
        for (; e.chunks < upTo; e.chunks++) {
            e.keys.add(chain.key(r, e.chunks));
        }
        return e.keys;
    }

    /**
     * Reserves host slots for {@code keys} (the longest prefix already checked to fit), once any
     * disk or remote tier written on eviction has saved the victims.
     *
     * @return the accepted plan, or null if the tier refused for now (counted) or victims are
     *         being saved first: the caller retries later
     */
    StorePlan.Accepted accept(List<BlockKey> keys, List<BlockKey> parents, Set<BlockKey> keep, long epoch) {
        if (disk != null && disk.writeOnEvict() && disk.protectVictims(keys, keep, epoch)) {
            return null; // the host's victims are being saved to disk first
        }
        if (remote != null && remote.writeOnEvict() && remote.protectVictims(keys, keep, epoch)) {
            return null; // the host's victims are being sent to the remote tier first
        }
        StorePlan plan = host.index().prepareStore(keys, parents, keep);
        if (!(plan instanceof StorePlan.Accepted accepted)) {
            stats.storeRefusals++;
            return null;
        }
        return accepted;
    }

    /**
     * Adds the chunks of {@code accepted} (a subset of {@code keys}, the chain's chunks
     * {@code [firstChunk, firstChunk + keys.size())}) to the step's host store job, started by
     * {@link #submitStep}. The job takes a reference on every device block it reads from now on,
     * so no block can be reallocated (and overwritten) while it is copied; the references are
     * dropped when the job completes.
     *
     * @param deviceBlocks chunk i of keys -> its device block ids
     * @param tokens       chunk i of keys -> its token ids
     */
    void add(long requestId, int firstChunk, List<BlockKey> keys, List<BlockKey> parents,
             StorePlan.Accepted accepted, java.util.function.IntFunction<int[]> deviceBlocks,
             java.util.function.IntFunction<int[]> tokens) {
        copies.clear();
        for (int i = 0; i < accepted.toStore().size(); i++) {
            int k = keys.indexOf(accepted.toStore().get(i));
            copies.add(new ChunkCopy(deviceBlocks.apply(k), accepted.slot(i), chain.namespace(), keys.get(k), parents.get(k),
                    tokens.apply(k)));
        }
        step.add(requestId, firstChunk, copies);
        copies.clear();
    }

    /** {@link #add}, then starts the job at once (lazy stores, which store outside a step's commits). */
    void submit(long requestId, int firstChunk, List<BlockKey> keys, List<BlockKey> parents,
                StorePlan.Accepted accepted, java.util.function.IntFunction<int[]> deviceBlocks,
                java.util.function.IntFunction<int[]> tokens, long epoch) {
        add(requestId, firstChunk, keys, parents, accepted, deviceBlocks, tokens);
        submitStep(epoch);
    }

    /** Starts the step's store job: every chunk {@link #add}ed since the last one, as one transfer job (none if nothing was added). */
    void submitStep(long epoch) {
        step.submit(HostTier.NAME, epoch);
    }

    /**
     * The first chunk a store at this commit may take: the cursor's; in a window group, past the
     * chunks with a block the request's next query no longer reads (docs/kv-groups.md): a block
     * that left the window is never stored after it left. Skipped chunks move the cursor.
     */
    private int firstChunkToStore(SequenceView r, int kvWritten, int toChunk) {
        int fromChunk = cursor(r.id()) / chunk();
        if (window == 0 || toChunk <= fromChunk) {
            return fromChunk;
        }
        int firstRead = Math.max(0, kvWritten - window + 1) / chain.blockSize();
        int firstInWindow = Math.min(toChunk, (firstRead + chunk() - 1) / chunk());
        if (firstInWindow <= fromChunk) {
            return fromChunk;
        }
        stats.windowBlocksSkipped += (long) (firstInWindow - fromChunk) * chunk();
        cursors.put(r.id(), firstInWindow * chunk());
        return firstInWindow;
    }

    /** Full chunks below {@code kvWritten} that may be stored (prompt blocks only unless decode blocks are offloaded). */
    private int storableChunks(SequenceView r, int kvWritten) {
        int blockSize = chain.blockSize();
        int fullBlocks = kvWritten / blockSize;
        if (config.offloadPromptOnly()) {
            // Blocks holding at least one prompt token; the one straddling the prompt's end counts.
            fullBlocks = Math.min(fullBlocks, (r.promptLength() + blockSize - 1) / blockSize);
        }
        return Math.min(fullBlocks, r.blockKeys().size()) / chunk();
    }

    /** Ends a host store job: the chunks before the first failed one become readable (the job's, across its parts). */
    void apply(OffloadJob.Store store, TransferResult res, boolean current, long epoch) {
        int ok = res.success() ? store.chunkKeys().size() : Math.max(0, res.firstFailedChunk());
        if (ok > 0) {
            host.index().completeStore(store.chunkKeys().subList(0, ok), true);
            if (current && disk != null) {
                disk.onHostStored(store.chunkKeys().subList(0, ok), epoch);
            }
            if (current && remote != null) {
                remote.onHostStored(store.chunkKeys().subList(0, ok), epoch);
            }
            if (current) {
                stats.blocksStored.add(store.tier(), (long) ok * chunk());
                stats.bytesStored += ok * chunk() * pool.layout().bytesPerBlock();
            }
        }
        if (ok < store.chunkKeys().size()) {
            host.index().completeStore(store.chunkKeys().subList(ok, store.chunkKeys().size()), false);
            stats.storeFailures++;
            // No hole in the stored chain: each live request retries from its first chunk not stored.
            for (OffloadJob.StorePart p : store.parts()) {
                if (p.offset() + p.chunks() > ok) {
                    cutCursor(p.requestId(), (p.firstChunk() + Math.max(0, ok - p.offset())) * chunk());
                }
            }
        }
    }

    /** The request's store cursor in blocks. */
    int cursor(long requestId) {
        return cursors.get(requestId, 0);
    }

    /** The request's first {@code blocks} blocks are in the host tier (loaded): no need to store them. */
    void advanceCursor(long requestId, int blocks) {
        cursors.put(requestId, Math.max(cursors.get(requestId, 0), blocks));
    }

    /** Blocks from {@code blocks} on are not stored after all (a failed load or store): retry from there. */
    void cutCursor(long requestId, int blocks) {
        if (cursors.containsKey(requestId)) {
            cursors.put(requestId, Math.min(cursors.get(requestId, 0), blocks));
        }
    }

    void forget(long requestId) {
        cursors.remove(requestId);
        earlier.remove(requestId);
    }

    /** Lazy stores: stores the pending chunks near eviction (a no-op when stores are eager). */
    void scan(long epoch) {
        if (lazy != null) {
            lazy.scan(epoch);
        }
    }

    /** Lazy stores: stores every pending chunk (the device prefix cache is about to be dropped); a no-op when eager. */
    void storeAllPending(long epoch) {
        if (lazy != null) {
            lazy.storeAll(epoch);
        }
    }

    /** Lazy stores: chunks completed but not stored yet (0 when stores are eager). */
    int pendingChunks() {
        return lazy == null ? 0 : lazy.pendingChunks();
    }

    void clear() {
        cursors.clear();
        earlier.clear();
        if (lazy != null) {
            lazy.clear();
        }
    }
}

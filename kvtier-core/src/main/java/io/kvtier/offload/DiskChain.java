package io.kvtier.offload;

import io.kvtier.kv.BlockKey;
import io.kvtier.offload.transfer.ChunkCopy;
import io.kvtier.offload.transfer.DiskJob;
import io.kvtier.offload.transfer.TransferEngine;
import io.kvtier.offload.transfer.TransferResult;
import io.kvtier.tier.ChunkHeader;
import io.kvtier.tier.HostTier;
import io.kvtier.tier.StorePlan;
import io.kvtier.tier.TierIndex;
import io.kvtier.tier.disk.DiskIndexScan;
import io.kvtier.tier.disk.DiskStore;
import io.kvtier.tier.disk.RestartScan;
import io.kvtier.tier.disk.ScannedChunk;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The disk tier behind the host tier (ARCHITECTURE §4): chunks reach the disk only from host
 * slots (write-through after a host store, or just before the host would evict them), and come
 * back only through the host tier (a promotion job reads the file into a host slot; the request
 * then loads it from the host like any host hit). Jobs here belong to the tier, not to a request.
 * Engine thread only; the files move on the transfer engine's disk thread.
 */
final class DiskChain extends TierBehindHost implements AutoCloseable {

    private final TierIndex index;
    private final DiskStore store;
    private final RestartScan scan;
    private final HostTier host;
    private final TransferEngine transfers;
    private final JobRegistry jobs;
    private final OffloadStats stats;
    private final int blocksPerChunk;
    private final long deadlineNanos;
    private final long bytesPerChunk;
    private final BlockKey namespace;
    /**
     * Whether a chunk is of use only with every chunk before it (a full-attention group: a lookup
     * starts at the chain's head), so that storing it must never evict one of them; a
     * sliding-window group's hit needs only its window.
     */
    private final boolean headFirst;
    private final List<BlockKey> pendingDeletions = new ArrayList<>();
    /**
     * Chunks this run dropped from the index while the restart scan runs. The scan reports a file
     * as it was when listed, possibly before this run wrote, evicted or deleted it: adopting such a
     * report again would bring back an entry whose file is gone (a failed load later) and evict a
     * live one to make room. This run's decision is the newer one; emptied once the scan finished.
     */
    private final Set<BlockKey> droppedWhileScanning = new HashSet<>();
    private final Set<BlockKey> promoted = new HashSet<>();
    /** Disk writes started to save host victims (write-on-evict); host stores wait while any runs. */
    private final Set<Long> evictWrites = new HashSet<>();
    private long writesPausedUntil;
    private boolean writesPaused;

    /** Back-off after a failed disk write (disk full, read-only, I/O error): stores to disk stop, then retry. */
    static final long WRITE_PAUSE_NANOS = 1_000_000_000L;

    DiskChain(TierIndex index, DiskStore store, RestartScan scan, HostTier host, TransferEngine transfers,
              JobRegistry jobs, OffloadStats stats, DiskWritePolicy writePolicy, int admitAfter, int blocksPerChunk,
              long bytesPerChunk, long deadlineNanos, BlockKey namespace, boolean headFirst) {
        super(writePolicy, admitAfter, Math.max(1, index.capacity()));
        this.headFirst = headFirst;
        this.bytesPerChunk = bytesPerChunk;
        this.namespace = namespace;
        this.index = index;
        this.store = store;
        this.scan = scan;
        this.host = host;
        this.transfers = transfers;
        this.jobs = jobs;
        this.stats = stats;
        this.blocksPerChunk = blocksPerChunk;
        this.deadlineNanos = deadlineNanos;
        // A host chunk the disk can serve is no loss to the hierarchy when the host evicts it: the
        // dueling policy's shadows score only the others (docs/cache-policy.md).
        if (host.index().policy() instanceof io.kvtier.tier.DuelingPolicy duel) {
            duel.scoreOnlyWhereAbsent(index::readable);
        }
    }

    TierIndex index() {
        return index;
    }

    /**
     * Adds the chunks the restart scan found since the last call (a chunk not yet scanned is a
     * miss). The budget holds at once: the scan delivers the oldest files first, so when the
     * index is full each newer file evicts the oldest one adopted, and the files evicted or left
     * out are deleted by a disk job started here (not left for a later write that may never come).
     */
    void drainScan(long epoch) {
        if (scan == null) {
            return;
        }
        scan.drain(Integer.MAX_VALUE, (ScannedChunk c) -> {
            if (index.state(c.key()) != TierIndex.EntryState.ABSENT || droppedWhileScanning.contains(c.key())) {
                return;
            }
            if (c.payloadLength() != bytesPerChunk) {
                // The namespace covers the chunk geometry, so such a file is not of this directory.
                queueDeletions(List.of(c.key()));
            } else if (index.prepareStore(List.of(c.key()), List.of(c.parent()), heldPrefixes(List.of(c.parent()), k -> null))
                    instanceof StorePlan.Accepted a) {
                deleteFiles(a.evicted());
                index.completeStore(List.of(c.key()), true);
            } else {
                queueDeletions(List.of(c.key())); // no room for it but in place of its own prefix: the file goes
            }
        });
        // Files the owner deleted (this process only reads): misses now, not failed loads later.
        for (BlockKey gone : scan.takeVanished()) {
            index.remove(gone);
        }
        if (scan.finished()) {
            droppedWhileScanning.clear();
        }
        deletePending(epoch);
    }

    /** Deletes the files of {@code keys}, whose entries this run just dropped from the index (a disk job takes them). */
    private void deleteFiles(Collection<BlockKey> keys) {
        queueDeletions(keys);
        dropped(keys);
    }

    /**
     * Queues the files of {@code keys} for the next disk job, unless this process only reads the
     * directory: its files are the owner's to delete, and a reader's rescans would otherwise queue
     * the same keys again and again.
     */
    private void queueDeletions(Collection<BlockKey> keys) {
        if (store == null || store.role() == DiskStore.Role.OWNER) {
            pendingDeletions.addAll(keys);
        }
    }

    /** Notes entries this run dropped, so that a report of the restart scan cannot bring them back. */
    private void dropped(Collection<BlockKey> keys) {
        if (scan != null && !scan.finished()) {
            droppedWhileScanning.addAll(keys);
        }
    }

    /** Starts a disk job deleting the files of {@link #pendingDeletions} now (if any, and the disk is writable). */
    private void deletePending(long epoch) {
        if (!pendingDeletions.isEmpty() && store != null && store.writable()) {
            long id = jobs.newId();
            long deadline = transfers.nanoTime() + deadlineNanos;
            List<BlockKey> deletions = takeDeletions();
            jobs.add(new OffloadJob.DiskWrite(id, List.of(), deletions, epoch, deadline));
            transfers.submit(new DiskJob(id, DiskJob.Kind.WRITE, List.of(), deletions, deadline));
        }
    }

    /** Progress of the restart scan (a scan that never ran reads as ended with nothing found). */
    DiskIndexScan.Progress scanProgress() {
        return scan == null ? new DiskIndexScan.Progress(0, 0, 0, 0, 0, 0, true, true) : scan.progress();
    }

    /**
     * Waits until the restart scan has listed every file, then adopts everything it found; if
     * interrupted, returns at once (adopting nothing) with the thread's interrupt flag set.
     */
    void awaitScan(java.time.Duration timeout, long epoch) {
        try {
            if (scan != null) {
                scan.awaitEnd(timeout);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        drainScan(epoch);
    }

    /** Leading keys readable on disk (a chunk being written counts as absent). */
    int lookup(List<BlockKey> keys) {
        return index.lookup(keys).readyChunks();
    }

    /**
     * Starts reading the longest prefix of {@code keys} (ready on disk, absent from the host)
     * that the host tier can hold beside {@code hostKeys} into host slots, evicting other host
     * entries by the host's policy. {@code hostKeys} are the request's chunks before them, ready
     * in the host: making room for the promoted chunks never evicts them.
     *
     * @return how many chunks are being promoted (0: no room in the host tier now, nothing changed)
     */
    int promote(List<BlockKey> hostKeys, List<BlockKey> keys, List<BlockKey> parents, List<int[]> tokens,
                BlockKey namespace, long epoch) {
        HostPromotion.Reserved r = HostPromotion.reserve(host, hostKeys, keys, parents, tokens, namespace, blocksPerChunk);
        if (r == null) {
            return 0;
        }
        keys = keys.subList(0, r.count());
        index.prepareLoad(keys);
        index.touch(keys);
        long id = jobs.newId();
        long deadline = transfers.nanoTime() + deadlineNanos;
        jobs.add(new OffloadJob.Promote(id, List.copyOf(keys), epoch, deadline));
        transfers.submit(new DiskJob(id, DiskJob.Kind.READ, r.copies(), takeDeletions(), deadline));
        return r.count();
    }

    /**
     * A host hit on {@code keys} (a chain, head first) is a use of the disk's copies too: the disk's
     * policy is touched with them (keys it does not hold are ignored), so its order follows the
     * hierarchy's use, not write order alone. Without this, a chunk the host keeps hitting is never
     * promoted and looks idle to the disk, which drops it; when the host later evicts it, it is lost
     * (docs/cache-policy.md, "the disk follows the host's hits": on the conversation trace's first
     * half, 3M host + 10M disk tokens, LRU 0.2820 -> 0.2853). No I/O.
     */
    void touchOnHostHit(List<BlockKey> keys) {
        index.touch(keys);
    }

    /** Whether a host load of {@code key} is really a disk hit (its chunk was promoted for it); forgets it. */
    boolean consumePromoted(BlockKey key) {
        return promoted.remove(key);
    }

    /**
     * Write-on-evict: saves the host's would-be victims of a store of {@code keys} to disk first.
     *
     * @return true if the host store must wait (victims are being written), false to go ahead
     */
    boolean protectVictims(List<BlockKey> keys, Set<BlockKey> keep, long epoch) {
        if (!evictWrites.isEmpty()) {
            return true; // victims are being saved; choosing more now would save more than needed
        }
        List<BlockKey> unsaved = new ArrayList<>();
        for (BlockKey v : host.index().plannedVictims(keys, keep)) {
            if (index.state(v) == TierIndex.EntryState.ABSENT) {
                unsaved.add(v);
            }
        }
        if (unsaved.isEmpty()) {
            return false;
        }
        // If the disk cannot take them now (writes paused, read-only), the host evicts them unsaved.
        long job = write(unsaved, epoch);
        if (job >= 0) {
            evictWrites.add(job);
        }
        return job >= 0;
    }

    /**
     * Starts a disk write of readable host entries that are absent from disk.
     *
     * @return the id of the job started, or -1
     */
    @Override
    long write(List<BlockKey> candidates, long epoch) {
        if (candidates.isEmpty()) {
            return -1;
        }
        if ((writesPaused && transfers.nanoTime() - writesPausedUntil < 0) || (store != null && !store.writable())) {
            // Each chunk is offered once (on its host store, or as a victim): one not taken now is never written.
            long skipped = candidates.stream().filter(k -> index.state(k) == TierIndex.EntryState.ABSENT).distinct().count();
            // A directory another process owns is read here by design: not a failure (a new user's trial).
            stats.notStored(store != null && !store.writable() ? OffloadStats.DISK_READ_ONLY : OffloadStats.DISK_WRITE_FAILED,
                    skipped * blocksPerChunk);
            return -1;
        }
        List<BlockKey> keys = new ArrayList<>();
        List<BlockKey> parents = new ArrayList<>();
        List<ChunkHeader> headers = new ArrayList<>();
        for (BlockKey k : candidates) {
            if (host.index().readable(k) && index.state(k) == TierIndex.EntryState.ABSENT && !keys.contains(k)) {
                // A ready host slot is written by nobody: its header can be read here. A host tier
                // without slot memory (the replay's) has the parent in its bookkeeping; no tokens.
                ChunkHeader h = host.hasSlab() ? ChunkHeader.readFrom(host.slab().headerOf(host.index().slotOf(k)), 0)
                        : ChunkHeader.of(namespace, k, host.index().parentOf(k), new int[0], bytesPerChunk, 0);
                keys.add(k);
                parents.add(h.parent());
                headers.add(h);
            }
        }
        if (keys.isEmpty()) {
            return -1;
        }
        // A chunk written in place of a chunk before it (F3 of a new user's trial: a one-chunk disk
        // kept the child and lost its head, so the next run hit nothing) is skipped instead.
        Set<BlockKey> prefixes = heldPrefixes(parents, host.index()::parentOf);
        int fits = index.fittingPrefix(keys, prefixes); // more than the disk holds: the first ones
        int prefixKept = prefixes.isEmpty() ? 0 : index.fittingPrefix(keys, Set.of()) - fits;
        stats.notStored(OffloadStats.DISK_PREFIX_KEPT, (long) prefixKept * blocksPerChunk);
        if (fits == 0 || !(index.prepareStore(keys.subList(0, fits), parents.subList(0, fits), prefixes)
                instanceof StorePlan.Accepted a) || a.toStore().isEmpty()) {
            if (prefixKept == 0) {
                stats.storeRefusals++;
            }
            return -1;
        }
        deleteFiles(a.evicted());
        List<BlockKey> toStore = a.toStore();
        int[] slots = host.index().prepareLoad(toStore);
        List<ChunkCopy> copies = new ArrayList<>();
        for (int i = 0; i < toStore.size(); i++) {
            ChunkHeader h = headers.get(keys.indexOf(toStore.get(i)));
            copies.add(new ChunkCopy(HostPromotion.noDevice(blocksPerChunk), slots[i], h.namespace(), h.key(), h.parent(), h.tokens()));
        }
        long id = jobs.newId();
        long deadline = transfers.nanoTime() + deadlineNanos;
        List<BlockKey> deletions = takeDeletions();
        jobs.add(new OffloadJob.DiskWrite(id, toStore, deletions, epoch, deadline));
        transfers.submit(new DiskJob(id, DiskJob.Kind.WRITE, copies, deletions, deadline));
        return id;
    }

    /**
     * The disk entries a store of chunks with {@code parents} must not evict: the chunks before
     * them held here ({@link TierIndex#heldPrefixes}); none in a window group, or while the
     * store needs no eviction (the walk up the chains is then skipped).
     */
    private Set<BlockKey> heldPrefixes(List<BlockKey> parents, java.util.function.UnaryOperator<BlockKey> parentElsewhere) {
        return headFirst && index.freeSlots() < parents.size() ? index.heldPrefixes(parents, parentElsewhere) : Set.of();
    }

    private List<BlockKey> takeDeletions() {
        List<BlockKey> d = List.copyOf(pendingDeletions);
        pendingDeletions.clear();
        return d;
    }

    void applyWrite(OffloadJob.DiskWrite job, TransferResult res, long bytesPerChunk) {
        evictWrites.remove(job.id());
        host.index().completeLoad(job.chunkKeys());
        int ok = res.success() ? job.chunkKeys().size() : Math.max(0, res.firstFailedChunk());
        if (res.timedOut()) {
            ok = 0;
        }
        if (ok > 0) {
            index.completeStore(job.chunkKeys().subList(0, ok), true);
            stats.blocksStored.add("disk", (long) ok * blocksPerChunk);
            stats.bytesStored += ok * bytesPerChunk;
        }
        if (ok < job.chunkKeys().size()) {
            index.completeStore(job.chunkKeys().subList(ok, job.chunkKeys().size()), false);
            stats.storeFailures++;
            stats.notStored(OffloadStats.DISK_WRITE_FAILED, (long) (job.chunkKeys().size() - ok) * blocksPerChunk);
            // Disk full or a write error: stop writing for a while; nothing else is affected.
            writesPausedUntil = transfers.nanoTime() + WRITE_PAUSE_NANOS;
            writesPaused = true;
        }
    }

    void applyPromote(OffloadJob.Promote job, TransferResult res, boolean current, long bytesPerChunk) {
        index.completeLoad(job.chunkKeys());
        int ok = res.success() ? job.chunkKeys().size() : Math.max(0, res.firstFailedChunk());
        if (res.timedOut()) {
            ok = 0;
        }
        if (ok > 0) {
            host.index().completeStore(job.chunkKeys().subList(0, ok), true);
            if (current) {
                promoted.addAll(job.chunkKeys().subList(0, ok));
                stats.blocksLoaded.add("disk", (long) ok * blocksPerChunk);
                stats.bytesLoaded += ok * bytesPerChunk;
            }
        }
        if (ok < job.chunkKeys().size()) {
            host.index().completeStore(job.chunkKeys().subList(ok, job.chunkKeys().size()), false);
            stats.loadFailures++;
            if (!res.timedOut()) {
                BlockKey bad = job.chunkKeys().get(ok);
                // Missing or corrupt file: the entry goes (§3.4), and with it every entry whose chain
                // passes through it. Those cannot be hit until the bad chunk is recomputed; dropping
                // them now lets that recompute's stores write the whole chain again in one pass,
                // instead of meeting (and dropping) one more bad chunk per restart. Their files go
                // too (the copier deleted the bad one), or the next start would adopt them again.
                List<BlockKey> after = index.descendantsOf(bad);
                index.remove(bad);
                after.forEach(index::remove);
                dropped(List.of(bad));
                deleteFiles(after);
            }
        }
    }

    /**
     * Clean shutdown with write-on-evict: starts writing every readable host chunk that is absent
     * from disk, hottest first (as many as the disk takes), so the next run starts warm.
     *
     * @return whether a write started (the caller waits for the jobs to complete)
     */
    boolean flushHost(long epoch) {
        if (!writeOnEvict()) {
            return false;
        }
        List<BlockKey> coldestFirst = host.index().policy().victims(host.capacity(), host.index()::readable);
        List<BlockKey> hottestFirst = new ArrayList<>(coldestFirst.reversed());
        writesPaused = false;
        return write(hottestFirst, epoch) >= 0;
    }

    /**
     * Drops every disk entry and deletes its file: a job on the disk thread, which runs its jobs one
     * at a time in order, so every read or write of those files started before (in flight, orphaned)
     * has finished when it deletes them, and every later write comes after it. A file the restart
     * scan has not reported yet is not known here: the scan adopts it later.
     *
     * @param epoch the scheduler's epoch after the reset (the deletion job belongs to it)
     */
    @Override
    void clear(long epoch) {
        deleteFiles(index.keys());
        index.clear();
        promoted.clear();
        deletePending(epoch);
    }

    String readOnlyReason() {
        return store == null ? null : store.readOnlyReason();
    }

    int chunksUsed() {
        return index.capacity() - index.freeSlots();
    }

    @Override
    void checkInvariants() {
        index.checkInvariants();
    }

    @Override
    public void close() {
        if (scan != null) {
            scan.close();
        }
        if (store != null) {
            store.close();
        }
    }
}

package io.kvtier.offload;

import io.kvtier.kv.BlockKey;
import io.kvtier.offload.transfer.ChunkCopy;
import io.kvtier.offload.transfer.DiskJob;
import io.kvtier.offload.transfer.TransferEngine;
import io.kvtier.offload.transfer.TransferResult;
import io.kvtier.tier.AdmissionFilter;
import io.kvtier.tier.ChunkHeader;
import io.kvtier.tier.HostTier;
import io.kvtier.tier.TierIndex;
import io.kvtier.tier.disk.DiskIndexScan;
import io.kvtier.tier.disk.DiskStore;
import io.kvtier.tier.disk.ScannedChunk;
import java.util.ArrayList;
import java.util.Arrays;
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
final class DiskChain implements AutoCloseable {

    private final TierIndex index;
    private final DiskStore store;
    private final DiskIndexScan scan;
    private final HostTier host;
    private final TransferEngine transfers;
    private final JobRegistry jobs;
    private final OffloadStats stats;
    private final DiskWritePolicy writePolicy;
    private final AdmissionFilter admission;
    private final int blocksPerChunk;
    private final long deadlineNanos;
    private final long bytesPerChunk;
    private final BlockKey namespace;
    private final List<BlockKey> pendingDeletions = new ArrayList<>();
    private final Set<BlockKey> promoted = new HashSet<>();
    /** Disk writes started to save host victims (write-on-evict); host stores wait while any runs. */
    private final Set<Long> evictWrites = new HashSet<>();
    private long writesPausedUntil;
    private boolean writesPaused;

    /** Back-off after a failed disk write (disk full, read-only, I/O error): stores to disk stop, then retry. */
    static final long WRITE_PAUSE_NANOS = 1_000_000_000L;

    DiskChain(TierIndex index, DiskStore store, DiskIndexScan scan, HostTier host, TransferEngine transfers,
              JobRegistry jobs, OffloadStats stats, DiskWritePolicy writePolicy, int admitAfter, int blocksPerChunk,
              long bytesPerChunk, long deadlineNanos, BlockKey namespace) {
        this.bytesPerChunk = bytesPerChunk;
        this.namespace = namespace;
        this.index = index;
        this.store = store;
        this.scan = scan;
        this.host = host;
        this.transfers = transfers;
        this.jobs = jobs;
        this.stats = stats;
        this.writePolicy = writePolicy;
        this.admission = new AdmissionFilter(admitAfter, Math.max(1, index.capacity()));
        this.blocksPerChunk = blocksPerChunk;
        this.deadlineNanos = deadlineNanos;
    }

    TierIndex index() {
        return index;
    }

    boolean writeOnEvict() {
        return writePolicy == DiskWritePolicy.ON_EVICT;
    }

    /** Adds the chunks the restart scan found since the last call (a chunk not yet scanned is a miss). */
    void drainScan() {
        if (scan == null) {
            return;
        }
        scan.drain(Integer.MAX_VALUE, (ScannedChunk c) -> {
            // Another blocks-per-chunk shares the namespace but not the chunk size: not ours to load.
            if (index.state(c.key()) != TierIndex.EntryState.ABSENT || c.payloadLength() != bytesPerChunk) {
                return;
            }
            if (index.prepareStore(List.of(c.key()), List.of(c.parent())) instanceof TierIndex.StorePlan.Accepted a) {
                pendingDeletions.addAll(a.evicted());
                index.completeStore(List.of(c.key()), true);
            } else {
                pendingDeletions.add(c.key()); // no room for it: the file goes
            }
        });
    }

    /** Progress of the restart scan (a scan that never ran reads as ended with nothing found). */
    DiskIndexScan.Progress scanProgress() {
        return scan == null ? new DiskIndexScan.Progress(0, 0, 0, 0, 0, 0, true, true) : scan.progress();
    }

    /** Waits until the restart scan has listed every file, then adopts everything it found. */
    void awaitScan(java.time.Duration timeout) throws InterruptedException {
        if (scan != null) {
            scan.awaitEnd(timeout);
        }
        drainScan();
    }

    /** Leading keys readable on disk (a chunk being written counts as absent). */
    int lookup(List<BlockKey> keys) {
        return index.lookup(keys).readyChunks();
    }

    /**
     * Starts reading {@code keys} (ready on disk, absent from the host) into host slots.
     * {@code hostKeys} are the request's chunks before them, ready in the host: they are part of
     * the same store plan, so making room for the promoted chunks never evicts them.
     *
     * @return false if the host tier has no room for them now (nothing changed)
     */
    boolean promote(List<BlockKey> hostKeys, List<BlockKey> hostParents, List<BlockKey> keys, List<BlockKey> parents,
                    List<int[]> tokens, BlockKey namespace, long epoch) {
        List<BlockKey> all = new ArrayList<>(hostKeys);
        all.addAll(keys);
        List<BlockKey> allParents = new ArrayList<>(hostParents);
        allParents.addAll(parents);
        if (!(host.index().prepareStore(all, allParents) instanceof TierIndex.StorePlan.Accepted a)) {
            return false;
        }
        if (!a.toStore().equals(keys)) {
            // Not exactly the disk chunks (one appeared in, or left, the host meanwhile): not now.
            host.index().completeStore(a.toStore(), false);
            return false;
        }
        index.prepareLoad(keys);
        index.touch(keys);
        List<ChunkCopy> copies = new ArrayList<>();
        for (int i = 0; i < keys.size(); i++) {
            copies.add(new ChunkCopy(noDevice(), a.slot(i), namespace, keys.get(i), parents.get(i), tokens.get(i)));
        }
        long id = jobs.newId();
        long deadline = transfers.nanoTime() + deadlineNanos;
        jobs.add(new OffloadJob.Promote(id, keys, epoch, deadline));
        transfers.submit(new DiskJob(id, DiskJob.Kind.READ, copies, takeDeletions(), deadline));
        return true;
    }

    /** Whether a host load of {@code key} is really a disk hit (its chunk was promoted for it); forgets it. */
    boolean consumePromoted(BlockKey key) {
        return promoted.remove(key);
    }

    /** A host store completed: write-through policy writes the admitted chunks to disk. */
    void onHostStored(List<BlockKey> keys, long epoch) {
        if (writePolicy == DiskWritePolicy.THROUGH) {
            List<BlockKey> admitted = new ArrayList<>();
            for (BlockKey k : keys) {
                if (admission.use(k)) {
                    admitted.add(k);
                }
            }
            write(admitted, epoch);
        }
    }

    /** A host lookup hit these keys: with an admission threshold, a use may admit them to disk now. */
    void onHostHit(List<BlockKey> keys, long epoch) {
        if (writePolicy == DiskWritePolicy.THROUGH && admission.usesToAdmit() > 1) {
            onHostStored(keys, epoch);
        }
    }

    /**
     * Write-on-evict: saves the host's would-be victims of a store of {@code keys} to disk first.
     *
     * @return true if the host store must wait (victims are being written), false to go ahead
     */
    boolean protectVictims(List<BlockKey> keys, long epoch) {
        if (!evictWrites.isEmpty()) {
            return true; // victims are being saved; choosing more now would save more than needed
        }
        List<BlockKey> unsaved = new ArrayList<>();
        for (BlockKey v : host.index().plannedVictims(keys)) {
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
    private long write(List<BlockKey> candidates, long epoch) {
        if (candidates.isEmpty() || (writesPaused && transfers.nanoTime() - writesPausedUntil < 0)
                || (store != null && !store.writable())) {
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
        if (!(index.prepareStore(keys, parents) instanceof TierIndex.StorePlan.Accepted a) || a.toStore().isEmpty()) {
            stats.storeRefusals++;
            return -1;
        }
        pendingDeletions.addAll(a.evicted());
        List<BlockKey> toStore = a.toStore();
        int[] slots = host.index().prepareLoad(toStore);
        List<ChunkCopy> copies = new ArrayList<>();
        for (int i = 0; i < toStore.size(); i++) {
            ChunkHeader h = headers.get(keys.indexOf(toStore.get(i)));
            copies.add(new ChunkCopy(noDevice(), slots[i], h.namespace(), h.key(), h.parent(), h.tokens()));
        }
        long id = jobs.newId();
        long deadline = transfers.nanoTime() + deadlineNanos;
        List<BlockKey> deletions = takeDeletions();
        jobs.add(new OffloadJob.DiskWrite(id, toStore, deletions, epoch, deadline));
        transfers.submit(new DiskJob(id, DiskJob.Kind.WRITE, copies, deletions, deadline));
        return id;
    }

    private List<BlockKey> takeDeletions() {
        List<BlockKey> d = List.copyOf(pendingDeletions);
        pendingDeletions.clear();
        return d;
    }

    private int[] noDevice() {
        int[] b = new int[blocksPerChunk];
        Arrays.fill(b, -1);
        return b;
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
            OffloadStats.add(stats.blocksStored, "disk", (long) ok * blocksPerChunk);
            stats.bytesStored += ok * bytesPerChunk;
        }
        if (ok < job.chunkKeys().size()) {
            index.completeStore(job.chunkKeys().subList(ok, job.chunkKeys().size()), false);
            stats.storeFailures++;
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
                OffloadStats.add(stats.blocksLoaded, "disk", (long) ok * blocksPerChunk);
                stats.bytesLoaded += ok * bytesPerChunk;
            }
        }
        if (ok < job.chunkKeys().size()) {
            host.index().completeStore(job.chunkKeys().subList(ok, job.chunkKeys().size()), false);
            stats.loadFailures++;
            if (!res.timedOut()) {
                index.remove(job.chunkKeys().get(ok)); // missing or corrupt file: the entry goes (§3.4)
            }
        }
    }

    /** Drops every disk entry (the files stay until overwritten or evicted by a later run's scan). */
    void clear() {
        index.clear();
        promoted.clear();
    }

    int chunksUsed() {
        return index.capacity() - index.freeSlots();
    }

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

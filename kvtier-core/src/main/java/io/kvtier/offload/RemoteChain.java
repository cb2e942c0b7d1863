package io.kvtier.offload;

import io.kvtier.kv.BlockKey;
import io.kvtier.offload.transfer.ChunkCopy;
import io.kvtier.offload.transfer.RemoteCopier;
import io.kvtier.offload.transfer.RemoteJob;
import io.kvtier.offload.transfer.TransferEngine;
import io.kvtier.offload.transfer.TransferResult;
import io.kvtier.tier.ChunkHeader;
import io.kvtier.tier.HostTier;
import io.kvtier.tier.remote.RemoteStore;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The remote tier behind the host tier (a Redis / Valkey store shared by engines). Like the disk
 * tier it is fed from host slots (write-through after a host store, or just before the host
 * evicts) and read back only through them (a promotion job reads values into host slots; the
 * request then loads them from the host). Unlike the disk tier it keeps no index: the store
 * evicts without telling and other engines write to it, so what it holds is learnt by probes
 * whose answers are hints, trusted for a short time; the value read is the truth (verified).
 * Engine thread only; the commands run on the transfer engine's remote threads.
 */
final class RemoteChain extends TierBehindHost {

    /** Answer of {@link #lookup} while a probe for the keys is in flight. */
    static final int PROBING = -1;
    /** Keys probed in one job at most. */
    static final int MAX_PROBE = 64;
    /** Hints kept at most (oldest forgotten first). */
    static final int MAX_HINTS = 1 << 16;

    private record Hint(boolean present, long until) {
    }

    private final RemoteStore store;
    private final io.kvtier.tier.remote.RemoteKeys storeNames;
    private final HostTier host;
    private final TransferEngine transfers;
    private final JobRegistry jobs;
    private final OffloadStats stats;
    private final RemoteStats remoteStats = new RemoteStats();
    private final int blocksPerChunk;
    private final long bytesPerChunk;
    private final long valueBytes;
    private final long maxBytesInFlight;
    private final long deadlineNanos;
    private final long hintNanos;
    private final BlockKey namespace;
    private final Map<BlockKey, Hint> hints = new LinkedHashMap<>(1024, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<BlockKey, Hint> e) {
            return size() > MAX_HINTS;
        }
    };
    private final Set<BlockKey> probing = new HashSet<>();
    private final Set<BlockKey> writing = new HashSet<>();
    private final Set<BlockKey> promoted = new HashSet<>();
    private final Set<Long> evictWrites = new HashSet<>();
    private final StoreLatency latency;
    private long bytesInFlight;
    private int writesInFlight;

    RemoteChain(RemoteTierParts parts, HostTier host, TransferEngine transfers, JobRegistry jobs, OffloadStats stats,
                int blocksPerChunk, long bytesPerChunk, int tokensPerChunk, BlockKey namespace) {
        super(parts.policy(), parts.admitAfter(), Math.max(1024, 4 * host.capacity()));
        this.store = parts.store();
        this.storeNames = parts.keys();
        this.host = host;
        this.transfers = transfers;
        this.jobs = jobs;
        this.stats = stats;
        this.blocksPerChunk = blocksPerChunk;
        this.bytesPerChunk = bytesPerChunk;
        this.valueBytes = ChunkHeader.encodedSize(tokensPerChunk) + bytesPerChunk;
        this.maxBytesInFlight = parts.maxBytesInFlight();
        this.deadlineNanos = 2 * parts.timeout().toNanos();
        this.hintNanos = parts.hintTtl().toNanos();
        this.latency = new StoreLatency(parts.timeout().toNanos() / 2);
        this.namespace = namespace;
    }

    RemoteStats stats() {
        if (store != null) {
            remoteStats.breakerState = store.breakerState();
            remoteStats.breakerOpens = store.breakerOpens();
            remoteStats.offReason = store.offReason();
        }
        remoteStats.bytesInFlight = bytesInFlight;
        remoteStats.writeLatencyNanos = latency.averageNanos();
        return remoteStats;
    }

    /** The store's name of a chunk: its node (in a cluster) is the one whose breaker decides. */
    private String name(BlockKey k) {
        return storeNames.of(k);
    }

    /** Whether commands for {@code key} may be sent now (tier on, its node's breaker not open). */
    private boolean available(BlockKey key) {
        return store == null || store.allows(name(key));
    }

    /**
     * Leading keys the store holds, as far as fresh probe answers tell; {@link #PROBING} if a
     * probe for the first unknown key is in flight or was just started (ask again next step).
     * An unavailable store answers 0 at once.
     */
    int lookup(List<BlockKey> keys, long epoch) {
        if (keys.isEmpty() || !available(keys.get(0))) {
            return 0;
        }
        long now = transfers.nanoTime();
        int n = 0;
        for (BlockKey k : keys) {
            Hint h = hints.get(k);
            if (h != null && now - h.until() < 0) {
                if (!h.present()) {
                    return n;
                }
                n++;
                continue;
            }
            if (probing.contains(k)) {
                return PROBING;
            }
            probe(keys.subList(n, Math.min(keys.size(), n + MAX_PROBE)), epoch);
            return PROBING;
        }
        return n;
    }

    private void probe(List<BlockKey> keys, long epoch) {
        List<BlockKey> todo = new ArrayList<>();
        for (BlockKey k : keys) {
            if (probing.contains(k)) {
                break; // the rest is asked by that probe already, or after it
            }
            todo.add(k);
        }
        List<ChunkCopy> copies = new ArrayList<>();
        for (BlockKey k : todo) {
            // A probe touches no slot: the copy only names the key.
            copies.add(new ChunkCopy(HostPromotion.noDevice(blocksPerChunk), 0, namespace, k, k, new int[0]));
        }
        long id = jobs.newId();
        long deadline = transfers.nanoTime() + deadlineNanos;
        probing.addAll(todo);
        remoteStats.probes++;
        if (io.kvtier.tier.remote.RemoteTrace.ON) {
            io.kvtier.tier.remote.RemoteTrace.mark("probe submitted: " + todo.size() + " keys from " + todo.getFirst().shortHex());
        }
        jobs.add(new OffloadJob.RemoteProbe(id, List.copyOf(todo), epoch, deadline));
        transfers.submit(new RemoteJob(id, RemoteJob.Kind.PROBE, copies, deadline));
    }

    void applyProbe(OffloadJob.RemoteProbe job, TransferResult res) {
        List<BlockKey> keys = job.chunkKeys();
        probing.removeAll(keys);
        if (io.kvtier.tier.remote.RemoteTrace.ON) {
            io.kvtier.tier.remote.RemoteTrace.mark("probe applied: " + (res.success() ? keys.size() : res.firstFailedChunk()) + " of " + keys.size() + " present");
        }
        int ok = res.success() ? keys.size() : Math.max(0, res.firstFailedChunk());
        long until = transfers.nanoTime() + hintNanos;
        for (int i = 0; i < ok; i++) {
            hints.put(keys.get(i), new Hint(true, until));
        }
        remoteStats.chunksProbedPresent += ok;
        if (!res.success()) {
            String cause = causeOf(res, RemoteStats.LOAD_FAILURE_CAUSES);
            if (!RemoteCopier.MISS.equals(cause)) {   // no answer, rather than "absent"
                RemoteStats.add(remoteStats.probeFailures, RemoteStats.PROBE_FAILURE_CAUSES.contains(cause) ? cause : "error", 1);
            }
        }
        if (ok < keys.size()) {
            // Absent, or no answer: a miss until the hint expires (so a request never waits on a dead store).
            hints.put(keys.get(ok), new Hint(false, until));
        }
    }

    /**
     * Starts reading the longest prefix of {@code keys} (found by probes, absent from the host)
     * that the host tier can hold beside {@code hostKeys} into host slots, by the same rule as
     * {@link DiskChain#promote} ({@link HostPromotion}).
     *
     * @return how many chunks are being promoted (0: no room in the host tier now, nothing changed)
     */
    int promote(List<BlockKey> hostKeys, List<BlockKey> keys, List<BlockKey> parents, List<int[]> tokens, long epoch) {
        HostPromotion.Reserved r = HostPromotion.reserve(host, hostKeys, keys, parents, tokens, namespace, blocksPerChunk);
        if (r == null) {
            return 0;
        }
        long id = jobs.newId();
        // The values of a long hit arrive one window after another: the deadline grows with them.
        long deadline = RemoteCopier.readDeadline(transfers.nanoTime(), deadlineNanos / 2, r.count() * valueBytes);
        jobs.add(new OffloadJob.RemotePromote(id, List.copyOf(keys.subList(0, r.count())), epoch, deadline));
        transfers.submit(new RemoteJob(id, RemoteJob.Kind.READ, r.copies(), deadline));
        return r.count();
    }

    /** Whether a host load of {@code key} is really a remote hit (its chunk was promoted for it); forgets it. */
    boolean consumePromoted(BlockKey key) {
        return promoted.remove(key);
    }

    void applyPromote(OffloadJob.RemotePromote job, TransferResult res, boolean current) {
        List<BlockKey> keys = job.chunkKeys();
        int ok = res.success() ? keys.size() : Math.max(0, res.firstFailedChunk());
        if (res.timedOut()) {
            ok = 0; // the engine gave up on the job: the slots were never written after that
        }
        applyRead(keys, ok, res.success() ? null : res, current);
        if (current) {
            promoted.addAll(keys.subList(0, ok));
        }
        if (ok < keys.size()) {
            stats.loadFailures++;
        }
    }

    /** Whether a remote hit may be loaded straight through its host slots into the device (one job, {@link RemoteJob.Kind#LOAD}). */
    boolean loadsThrough() {
        return transfers.loadsFromRemote();
    }

    /** Deadline of a job reading {@code chunks} values from the store, from now (they arrive one window after another). */
    long readDeadline(int chunks) {
        return RemoteCopier.readDeadline(transfers.nanoTime(), deadlineNanos / 2, chunks * valueBytes);
    }

    /**
     * A read of {@code keys} from the store into host slots reserved for them ended (a promotion,
     * or the store part of a load through it): the first {@code ok} are whole in their slots and
     * become readable, the rest are dropped.
     *
     * @param failure the failed job's result if the read failed at {@code keys[ok]} (its cause is
     *                counted, and the key is a miss until the hint expires); null if it did not fail there
     */
    void applyRead(List<BlockKey> keys, int ok, TransferResult failure, boolean current) {
        if (ok > 0) {
            host.index().completeStore(keys.subList(0, ok), true);
            remoteStats.chunksLoaded += ok;
            if (current) {
                stats.blocksLoaded.add("remote", (long) ok * blocksPerChunk);
                stats.bytesLoaded += ok * bytesPerChunk;
            }
        }
        if (ok < keys.size()) {
            host.index().completeStore(keys.subList(ok, keys.size()), false);
            if (failure != null) {
                RemoteStats.add(remoteStats.loadFailures, causeOf(failure, RemoteStats.LOAD_FAILURE_CAUSES), 1);
                hints.put(keys.get(ok), new Hint(false, transfers.nanoTime() + hintNanos));
            }
        }
    }

    /**
     * The cause word of a failed remote job ({@link RemoteJob}), one of {@code known} (the label
     * values the metrics register in advance): a missed deadline is a timeout, a word not in
     * {@code known} is an {@code error}.
     */
    static String causeOf(TransferResult res, List<String> known) {
        if (res.timedOut()) {
            return RemoteCopier.TIMEOUT;
        }
        int colon = res.error().indexOf(':');
        String word = colon > 0 ? res.error().substring(0, colon) : "error";
        return known.contains(word) ? word : "error";
    }

    /**
     * Write-on-evict: sends the host's would-be victims of a store of {@code keys} to the store
     * first. The host store waits only for writes that started (within the bytes budget, to an
     * available store); a victim that cannot be sent is evicted unsaved.
     *
     * @return true if the host store must wait
     */
    boolean protectVictims(List<BlockKey> keys, Set<BlockKey> keep, long epoch) {
        if (!evictWrites.isEmpty()) {
            return true;
        }
        long job = write(host.index().plannedVictims(keys, keep), epoch);
        if (job >= 0) {
            evictWrites.add(job);
        }
        return job >= 0;
    }

    private boolean knownPresent(BlockKey k) {
        Hint h = hints.get(k);
        return h != null && h.present() && transfers.nanoTime() - h.until() < 0;
    }

    /** Starts a write of readable host entries the store is not known to hold; the id, or -1. */
    @Override
    long write(List<BlockKey> candidates, long epoch) {
        List<BlockKey> keys = new ArrayList<>();
        for (BlockKey k : candidates) {
            if (host.index().readable(k) && !knownPresent(k) && !writing.contains(k) && !keys.contains(k)) {
                keys.add(k);
            }
        }
        if (keys.isEmpty()) {
            return -1;
        }
        if (!available(keys.get(0))) {
            remoteStats.dropped(RemoteStats.UNAVAILABLE, keys.size());
            return -1;
        }
        if (!latency.admits(writesInFlight)) {
            remoteStats.dropped(RemoteStats.SLOW, keys.size());
            return -1;
        }
        // Parents first: the head of the chain is kept when the budget cuts it.
        int fit = (int) Math.min(keys.size(), Math.max(0, (maxBytesInFlight - bytesInFlight) / valueBytes));
        remoteStats.dropped(RemoteStats.BUDGET, keys.size() - fit);
        if (fit == 0) {
            return -1;
        }
        keys = new ArrayList<>(keys.subList(0, fit));
        int[] slots = host.index().prepareLoad(keys);
        List<ChunkCopy> copies = new ArrayList<>();
        for (int i = 0; i < keys.size(); i++) {
            ChunkHeader h = host.hasSlab() ? ChunkHeader.readFrom(host.slab().headerOf(slots[i]), 0)
                    : ChunkHeader.of(namespace, keys.get(i), host.index().parentOf(keys.get(i)), new int[0], bytesPerChunk, 0);
            copies.add(new ChunkCopy(HostPromotion.noDevice(blocksPerChunk), slots[i], h.namespace(), h.key(), h.parent(), h.tokens()));
        }
        long id = jobs.newId();
        long deadline = transfers.nanoTime() + deadlineNanos;
        long bytes = keys.size() * valueBytes;
        bytesInFlight += bytes;
        writesInFlight++;
        writing.addAll(keys);
        jobs.add(new OffloadJob.RemoteWrite(id, keys, bytes, epoch, deadline));
        transfers.submit(new RemoteJob(id, RemoteJob.Kind.WRITE, copies, deadline));
        return id;
    }

    void applyWrite(OffloadJob.RemoteWrite job, TransferResult res) {
        evictWrites.remove(job.id());
        List<BlockKey> keys = job.chunkKeys();
        host.index().completeLoad(keys);
        bytesInFlight -= job.bytes();
        writesInFlight--;
        // The store's own time (the copier's, not the wait behind other jobs of a burst); an expired job took its deadline.
        latency.sample(res.timedOut() ? deadlineNanos : res.nanos());
        writing.removeAll(keys);
        int ok = res.success() ? keys.size() : Math.max(0, res.firstFailedChunk());
        if (res.timedOut()) {
            ok = 0;
        }
        if (sentASet(res)) {
            remoteStats.writes++;
        }
        long until = transfers.nanoTime() + hintNanos;
        for (int i = 0; i < ok; i++) {
            hints.put(keys.get(i), new Hint(true, until));
        }
        if (ok > 0) {
            remoteStats.chunksStored += ok;
            stats.blocksStored.add("remote", (long) ok * blocksPerChunk);
            stats.bytesStored += ok * bytesPerChunk;
        }
        if (ok < keys.size()) {
            // Chunks, not jobs: a limit every value exceeds fails each job at its first chunk.
            RemoteStats.add(remoteStats.storeFailures, causeOf(res, RemoteStats.STORE_FAILURE_CAUSES), keys.size() - ok);
        }
    }

    /**
     * Whether a write job sent any SET: not when it failed at its first chunk for
     * {@link RemoteCopier#OVERSIZE}, which the copier decides before sending, and every value of
     * this chain has one size, so then no value was sent (a new user's trial: "0 chunks stored in
     * 5 write jobs" with every chunk above {@code --remote-max-value}).
     */
    private static boolean sentASet(TransferResult res) {
        return res.success() || res.firstFailedChunk() > 0
                || !RemoteCopier.OVERSIZE.equals(causeOf(res, RemoteStats.STORE_FAILURE_CAUSES));
    }

    /** Forgets every hint (a cache reset; the epoch is not needed here); jobs in flight end as usual. */
    @Override
    void clear(long epoch) {
        hints.clear();
        promoted.clear();
    }

    @Override
    void checkInvariants() {
        if (writesInFlight < 0 || (writesInFlight == 0) != (bytesInFlight == 0)) {
            throw new IllegalStateException("remote write jobs in flight " + writesInFlight + " with " + bytesInFlight
                    + " bytes in flight");
        }
        if (bytesInFlight < 0 || (writing.isEmpty() && bytesInFlight != 0)) {
            throw new IllegalStateException("remote bytes in flight " + bytesInFlight + " with " + writing.size()
                    + " chunks being written");
        }
        if (bytesInFlight > maxBytesInFlight) {
            throw new IllegalStateException("remote bytes in flight " + bytesInFlight + " exceed the budget " + maxBytesInFlight);
        }
    }

    @Override
    void close() {
        if (store != null) {
            store.close();
        }
    }
}

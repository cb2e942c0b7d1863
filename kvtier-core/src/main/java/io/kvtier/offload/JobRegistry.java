package io.kvtier.offload;

import io.kvtier.kv.BlockKey;
import io.kvtier.kv.BlockPool;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The single owner of job state (ARCHITECTURE §4): job id -> job, request -> its jobs, chunk
 * key -> the load in flight for it, and orphans (jobs whose request no longer waits for them: timed
 * out or from before a cache reset) that still hold their resources until they really complete.
 * Invariants are checked in {@link #checkInvariants}. Engine thread only.
 */
final class JobRegistry {

    private final Map<Long, OffloadJob> live = new LinkedHashMap<>();
    private final Map<Long, OffloadJob> orphans = new HashMap<>();
    /** Request -> its live loads and other request jobs (stores are counted in {@link #storesOf}). */
    private final Map<Long, Set<Long>> byRequest = new HashMap<>();
    /**
     * Request -> live store parts naming it: a store job serves every request that completed a
     * chunk in its step, so a count per request (no boxing, no set per job) says which have stores.
     */
    private final LongIntMap storesOf = new LongIntMap();
    private final Map<BlockKey, Long> loadingKeys = new HashMap<>();
    private long nextId = 1;

    long newId() {
        return nextId++;
    }

    void add(OffloadJob job) {
        if (job instanceof OffloadJob.Promote || job instanceof OffloadJob.RemotePromote) {
            // Promoted keys count as being loaded (§3.5): lookups covering them wait.
            for (BlockKey k : job.chunkKeys()) {
                if (loadingKeys.putIfAbsent(k, job.id()) != null) {
                    throw new IllegalStateException("key " + k.shortHex() + " is already being loaded by job " + loadingKeys.get(k));
                }
            }
            live.put(job.id(), job);
            return;
        }
        if (job instanceof OffloadJob.DiskWrite || job instanceof OffloadJob.RemoteWrite || job instanceof OffloadJob.RemoteProbe) {
            live.put(job.id(), job);
            return;
        }
        if (job instanceof OffloadJob.Load load) {
            if (hasStore(job.requestId()) || hasLoad(job.requestId())) {
                throw new IllegalStateException("request " + job.requestId() + " already has jobs in flight; a load must be its only job");
            }
            for (BlockKey k : load.chunkKeys()) {
                if (loadingKeys.putIfAbsent(k, job.id()) != null) {
                    throw new IllegalStateException("key " + k.shortHex() + " is already being loaded by job " + loadingKeys.get(k));
                }
            }
        } else if (job instanceof OffloadJob.Store store) {
            for (OffloadJob.StorePart p : store.parts()) {
                if (hasLoad(p.requestId())) {
                    throw new IllegalStateException("request " + p.requestId() + " has a load in flight; no store may start");
                }
            }
            for (OffloadJob.StorePart p : store.parts()) {
                storesOf.put(p.requestId(), storesOf.get(p.requestId(), 0) + 1);
            }
            live.put(job.id(), job);
            return;
        }
        live.put(job.id(), job);
        byRequest.computeIfAbsent(job.requestId(), r -> new HashSet<>()).add(job.id());
    }

    /** A live job of this id, or null. */
    OffloadJob live(long jobId) {
        return live.get(jobId);
    }

    /**
     * Removes a job that really completed, live or orphan.
     *
     * @return the job and whether it was still live, or null for an unknown id (a duplicate
     *         completion: ignored, so nothing is released twice)
     */
    Completed complete(long jobId) {
        OffloadJob j = live.remove(jobId);
        if (j != null) {
            detach(j);
            return new Completed(j, true);
        }
        j = orphans.remove(jobId);
        return j == null ? null : new Completed(j, false);
    }

    record Completed(OffloadJob job, boolean live) {
    }

    /** Detaches a live job from its request (timed out, or reset): it keeps its resources until it completes. */
    void orphan(long jobId) {
        OffloadJob j = live.remove(jobId);
        if (j != null) {
            detach(j);
            orphans.put(jobId, j);
        }
    }

    private void detach(OffloadJob j) {
        if (j instanceof OffloadJob.Store store) {
            for (OffloadJob.StorePart p : store.parts()) {
                int n = storesOf.get(p.requestId(), 0) - 1;
                if (n > 0) {
                    storesOf.put(p.requestId(), n);
                } else {
                    storesOf.remove(p.requestId());
                }
            }
            return;
        }
        Set<Long> ids = byRequest.get(j.requestId());
        if (ids != null) {
            ids.remove(j.id());
            if (ids.isEmpty()) {
                byRequest.remove(j.requestId());
            }
        }
        if (j instanceof OffloadJob.Load || j instanceof OffloadJob.Promote || j instanceof OffloadJob.RemotePromote) {
            for (BlockKey k : j.chunkKeys()) {
                loadingKeys.remove(k, j.id());
            }
        }
    }

    boolean hasJobs(long requestId) {
        return byRequest.containsKey(requestId) || storesOf.containsKey(requestId);
    }

    boolean hasLoad(long requestId) {
        return jobsOf(requestId, OffloadJob.Load.class);
    }

    boolean hasStore(long requestId) {
        return storesOf.containsKey(requestId);
    }

    private boolean jobsOf(long requestId, Class<? extends OffloadJob> kind) {
        if (byRequest.isEmpty()) {
            return false; // the common case with only stores in flight: no boxed lookup
        }
        Set<Long> ids = byRequest.get(requestId);
        if (ids == null) {
            return false;
        }
        for (long id : ids) {
            if (kind.isInstance(live.get(id))) {
                return true;
            }
        }
        return false;
    }

    /** The live load job loading this chunk key, or -1. */
    long loadingJob(BlockKey key) {
        Long id = loadingKeys.get(key);
        return id == null ? -1 : id;
    }

    /** A copy of the live jobs. */
    java.util.List<OffloadJob> liveJobs() {
        return java.util.List.copyOf(live.values());
    }

    int liveCount() {
        return live.size();
    }

    int orphanCount() {
        return orphans.size();
    }

    boolean isEmpty() {
        return live.isEmpty() && orphans.isEmpty();
    }

    /** The ids of {@link #allJobs()}, live first. */
    java.util.List<Long> ids() {
        java.util.List<Long> ids = new java.util.ArrayList<>(live.size() + orphans.size());
        for (OffloadJob j : allJobs()) {
            ids.add(j.id());
        }
        return ids;
    }

    /** All jobs holding resources: live and orphaned. */
    Iterable<OffloadJob> allJobs() {
        java.util.List<OffloadJob> all = new java.util.ArrayList<>(live.values());
        all.addAll(orphans.values());
        return all;
    }

    /**
     * Device blocks that only pending stores keep from the free queue: they become free when those
     * stores complete, so the scheduler waits for them rather than preempting anyone.
     */
    int blocksFreedByStores(BlockPool pool) {
        Map<Integer, Integer> pins = new HashMap<>();
        for (OffloadJob j : allJobs()) {
            if (j instanceof OffloadJob.Store) {
                for (int b : j.deviceBlocks()) {
                    pins.merge(b, 1, Integer::sum);
                }
            }
        }
        int n = 0;
        for (Map.Entry<Integer, Integer> e : pins.entrySet()) {
            if (pool.refCount(e.getKey()) == e.getValue()) {
                n++;
            }
        }
        return n;
    }

    /**
     * When {@code missing} device blocks held only by stores come free: the stores in submission
     * order (the lane is FIFO) up to the one that frees the last of them.
     *
     * @param blocks        device blocks those stores copy
     * @param deadlineNanos the latest of their deadlines (a store ends by its deadline, copied or failed)
     */
    record StoresAhead(long blocks, long deadlineNanos) {
    }

    /** {@link StoresAhead} for {@code missing} blocks; null if the stores in flight do not free that many (the rest are held by requests). */
    StoresAhead storesUntilFree(BlockPool pool, int missing) {
        if (missing <= 0) {
            return new StoresAhead(0, Long.MIN_VALUE);
        }
        java.util.List<OffloadJob> stores = new java.util.ArrayList<>();
        Map<Integer, Integer> pins = new HashMap<>();
        for (OffloadJob j : allJobs()) {
            if (j instanceof OffloadJob.Store) {
                stores.add(j);
                for (int b : j.deviceBlocks()) {
                    pins.merge(b, 1, Integer::sum);
                }
            }
        }
        stores.sort(java.util.Comparator.comparingLong(OffloadJob::id));
        Map<Integer, Integer> left = new HashMap<>(pins);
        long ahead = 0;
        long deadline = Long.MIN_VALUE;
        int freed = 0;
        for (OffloadJob j : stores) {
            ahead += j.deviceBlocks().length;
            deadline = Math.max(deadline, ((OffloadJob.Store) j).deadlineNanos());
            for (int b : j.deviceBlocks()) {
                if (left.merge(b, -1, Integer::sum) == 0 && pool.refCount(b) == pins.get(b)) {
                    freed++;
                }
            }
            if (freed >= missing) {
                return new StoresAhead(ahead, deadline);
            }
        }
        return null;
    }

    /**
     * Checks: every job's blocks are referenced at least once per job holding them; no block is
     * both a load target and a store source; no request has a load and a store; the key index
     * names only live loads.
     *
     * @throws IllegalStateException naming the broken invariant
     */
    void checkInvariants(BlockPool pool) {
        Map<Integer, Integer> pins = new HashMap<>();
        Set<Integer> loadTargets = new HashSet<>();
        Set<Integer> storeSources = new HashSet<>();
        for (OffloadJob j : allJobs()) {
            for (int b : j.deviceBlocks()) {
                pins.merge(b, 1, Integer::sum);
                (j instanceof OffloadJob.Load ? loadTargets : storeSources).add(b);
            }
        }
        for (Map.Entry<Integer, Integer> e : pins.entrySet()) {
            if (pool.refCount(e.getKey()) < e.getValue()) {
                throw new IllegalStateException("block " + e.getKey() + " held by " + e.getValue() + " jobs but has reference count "
                        + pool.refCount(e.getKey()));
            }
        }
        for (int b : loadTargets) {
            if (storeSources.contains(b)) {
                throw new IllegalStateException("block " + b + " is both a load target and a store source");
            }
        }
        for (long r : byRequest.keySet()) {
            if (hasLoad(r) && hasStore(r)) {
                throw new IllegalStateException("request " + r + " has a load and a store in flight");
            }
        }
        Map<Long, Integer> parts = new HashMap<>();
        for (OffloadJob j : live.values()) {
            if (j instanceof OffloadJob.Store store) {
                for (OffloadJob.StorePart p : store.parts()) {
                    parts.merge(p.requestId(), 1, Integer::sum);
                }
            }
        }
        for (Map.Entry<Long, Integer> e : parts.entrySet()) {
            if (storesOf.get(e.getKey(), 0) != e.getValue()) {
                throw new IllegalStateException("request " + e.getKey() + " counts " + storesOf.get(e.getKey(), 0)
                        + " store parts but live stores name it " + e.getValue() + " times");
            }
        }
        if (storesOf.size() != parts.size()) {
            throw new IllegalStateException(storesOf.size() + " requests counted with stores, but live stores name " + parts.size());
        }
        for (Map.Entry<BlockKey, Long> e : loadingKeys.entrySet()) {
            OffloadJob j = live.get(e.getValue());
            if (!(j instanceof OffloadJob.Load || j instanceof OffloadJob.Promote || j instanceof OffloadJob.RemotePromote)
                    || !j.chunkKeys().contains(e.getKey())) {
                throw new IllegalStateException("key " + e.getKey().shortHex() + " indexed as loading by job " + e.getValue() + " which does not load it");
            }
        }
        for (Map.Entry<Long, Set<Long>> e : byRequest.entrySet()) {
            for (long id : e.getValue()) {
                if (live.get(id) == null || live.get(id).requestId() != e.getKey()) {
                    throw new IllegalStateException("request " + e.getKey() + " lists job " + id + " which is not its live job");
                }
            }
        }
    }

    /** Blocks of the jobs in flight on each tier's load lane: host loads, disk and remote promotions and writes. */
    java.util.Map<String, Long> queuedBlocks(int blocksPerChunk) {
        java.util.Map<String, Long> queued = new java.util.TreeMap<>();
        for (OffloadJob j : allJobs()) {
            switch (j) {
                case OffloadJob.Load l -> queued.merge(io.kvtier.tier.HostTier.NAME, (long) l.blocks(), Long::sum);
                case OffloadJob.Promote p -> queued.merge("disk", (long) p.chunkKeys().size() * blocksPerChunk, Long::sum);
                case OffloadJob.DiskWrite w -> queued.merge("disk", (long) w.chunkKeys().size() * blocksPerChunk, Long::sum);
                case OffloadJob.RemotePromote p -> queued.merge("remote", (long) p.chunkKeys().size() * blocksPerChunk, Long::sum);
                case OffloadJob.RemoteWrite w -> queued.merge("remote", (long) w.chunkKeys().size() * blocksPerChunk, Long::sum);
                default -> {
                }
            }
        }
        return queued;
    }
}

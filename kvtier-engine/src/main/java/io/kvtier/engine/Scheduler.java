package io.kvtier.engine;

import io.kvtier.kv.KvCacheManager;
import io.kvtier.offload.BlockWait;
import io.kvtier.offload.Contention;
import io.kvtier.offload.Lookup;
import io.kvtier.offload.OffloadScheduler;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Continuous batching under a token budget per step: requests already running go first (their
 * decode tokens and the rest of their chunked prefill), then waiting requests are admitted in
 * arrival order with a device prefix-cache lookup and, with offloading on, a lookup in the offload
 * tiers beyond it; a request with an external hit is parked until its load job ends and computes
 * nothing meanwhile. When a running request cannot get a block, the scheduler first waits for
 * pending stores that hold blocks (they are memory copies), then preempts the newest running
 * request (its blocks are released; it is recomputed later, reusing what is still cached).
 * Admission stops at the first request that does not fit, except (with {@code --load-policy
 * faster}) a hit whose load lacks device blocks that stores in flight will free soon: it waits
 * and those behind it pass, for at most as long as recomputing its hit would cost, then it is
 * recomputed ({@link OffloadScheduler#whenBlocksShort}); a request passes only with the blocks the
 * waiting one can spare ({@link BlockReservations}).
 *
 * <p>With {@link EngineConfig#prefillPriority()} and offloading on, a request's first token does
 * not wait for others' decodes to end: when the first waiting request that has no token yet
 * lacks device blocks for its prompt, running requests are preempted until it fits. A victim's
 * prompt blocks are in the host tier (stored after its prefill), so it resumes with a load and
 * recomputes only its decoded tail; each preemption is one long gap between the victim's tokens,
 * so victims are chosen to keep those gaps few and short: only requests that made progress since
 * their admission and were never preempted for a prefill before (at most one such gap per
 * request), those with no offload job in flight first (their blocks are free at once), latest
 * arrival first. Admission takes that first request without a token first, then every other
 * waiting request in line, a victim queued as if it arrived when it was preempted: it resumes
 * before the requests that arrived after it, not after every new arrival. This trades some
 * inter-token latency of the victims for time to first token (docs/design-notes.md, "Prefill
 * priority"). Engine thread only.
 */
public final class Scheduler {

    /** Admission order under prefill priority; one instance (a comparator built per step was a lambda linked at the first such step). */
    private static final Comparator<Request> BY_QUEUED_AT = Comparator.comparingLong(Request::queuedAt);

    private final EngineConfig config;
    private final KvCacheManager kv;
    private final OffloadScheduler offload;
    private final Deque<Request> waiting = new ArrayDeque<>();
    private final List<Request> running = new ArrayList<>();
    private final Map<Long, Request> loading = new LinkedHashMap<>();
    /** Requests passed by those behind while their load waits for device blocks, and what they are owed (none wait without offloading). */
    private final BlockReservations reservations;
    private long arrivals;
    private long preemptedForPrefill;

    /** @param offload the offload scheduler, or null when offloading is off */
    public Scheduler(EngineConfig config, KvCacheManager kv, OffloadScheduler offload) {
        this.config = config;
        this.kv = kv;
        this.offload = offload;
        this.reservations = offload == null ? BlockReservations.none(kv) : new BlockReservations(kv, offload);
    }

    public void add(Request r) {
        r.setArrival(arrivals++);
        waiting.addLast(r);
    }

    public List<Request> running() {
        return running;
    }

    public Deque<Request> waiting() {
        return waiting;
    }

    /** Requests parked until their load job ends. */
    public Map<Long, Request> loading() {
        return loading;
    }

    /** Requests preempted so far to make room for a prefill ({@link EngineConfig#prefillPriority()}). */
    public long preemptedForPrefill() {
        return preemptedForPrefill;
    }

    public boolean hasWork() {
        return !waiting.isEmpty() || !running.isEmpty() || !loading.isEmpty();
    }

    /** Decides this step's work; allocates the device blocks it needs and starts load jobs. */
    public StepPlan schedule() {
        int budget = config.maxBatchTokens();
        List<StepPlan.Item> items = new ArrayList<>();
        int preempted = 0;
        boolean blocked = false;
        // Before anything is planned: a victim must not be one of this step's items.
        int forPrefill = prefillPriority() ? preemptForPrefill() : 0;
        for (int i = 0; i < running.size() && budget > 0; ) {
            Request r = running.get(i);
            int n = Math.min(r.numTokens() - r.numComputed(), budget);
            boolean self = false;
            while (!kv.grow(r.id(), r.numComputed() + n)) {
                if (offload != null && storesFreeEnough(kv.blocksNeeded(r.id(), r.numComputed() + n))) {
                    blocked = true; // pending stores will free enough blocks: wait rather than preempt
                    break;
                }
                Request victim = running.getLast();
                preempt(victim);
                preempted++;
                if (victim == r) {
                    self = true;
                    break;
                }
            }
            if (self || blocked) {
                break;
            }
            items.add(new StepPlan.Item(r, r.numComputed(), n));
            budget -= n;
            i++;
        }
        // A step that had to preempt or wait admits nobody: freed blocks go to those running.
        if (preempted == 0 && !blocked) {
            budget = admit(items, budget);
        }
        return new StepPlan(List.copyOf(items), preempted + forPrefill);
    }

    /** Whether every KV group's free blocks plus those its pending stores free cover {@code need}. */
    private boolean storesFreeEnough(int need) {
        for (int g = 0; g < kv.groups().size(); g++) {
            if (kv.pool(g).freeCount() + offload.blocksFreedByStores(g) < need) {
                return false;
            }
        }
        return true;
    }

    /** Blocks pending stores free in the KV group where they free the fewest. */
    private int blocksFreedByStores() {
        int n = Integer.MAX_VALUE;
        for (int g = 0; g < kv.groups().size(); g++) {
            n = Math.min(n, offload.blocksFreedByStores(g));
        }
        return n;
    }

    private boolean prefillPriority() {
        return offload != null && config.prefillPriority();
    }

    /**
     * Prefill priority: preempts running requests until the first waiting request without a token
     * (in line, {@link #admissionOrder()}) fits with its whole prompt (blocks that pending stores
     * will free count as free). Victims ({@link #prefillVictim()}) made progress since their
     * admission, so every admission makes progress and nothing is preempted twice for nothing.
     *
     * @return the number of requests preempted
     */
    private int preemptForPrefill() {
        Request head = firstWithoutToken();
        if (head == null || running.size() + loading.size() >= config.maxRunning()) {
            return 0;
        }
        int hit = kv.prefixHitBlocks(head.blockKeys(), head.numTokens());
        int n = 0;
        while (kv.blocksShort(head.blockKeys(), hit, head.numTokens()) > blocksFreedByStores()) {
            Request victim = prefillVictim();
            if (victim == null) {
                break;
            }
            preempt(victim);
            victim.countPrefillPreemption();
            n++;
        }
        preemptedForPrefill += n;
        return n;
    }

    /** The waiting request without a token that is first in line and free to be admitted, or null. */
    private Request firstWithoutToken() {
        Request head = null;
        for (Request r : waiting) {
            if (r.numOutputTokens() == 0 && !offload.hasJobs(r.id()) && (head == null || r.queuedAt() < head.queuedAt())) {
                head = r;
            }
        }
        return head;
    }

    /**
     * The running request to preempt for a prefill, or null: one that produced a token since its
     * admission and was never preempted for a prefill (each such preemption is a long gap between
     * its tokens: one at most); among them one without offload jobs in flight (nothing to write:
     * its blocks are free at once), then the latest arrival.
     */
    private Request prefillVictim() {
        Request victim = null;
        for (Request r : running) {
            if (r.numOutputTokens() > r.outputsAtAdmission() && r.prefillPreemptions() == 0
                    && (victim == null || victimOrder(r, victim) < 0)) {
                victim = r;
            }
        }
        return victim;
    }

    /** Negative if {@code a} is the better victim: no jobs in flight first, then the latest arrival. */
    private int victimOrder(Request a, Request b) {
        boolean aFree = !offload.hasJobs(a.id());
        boolean bFree = !offload.hasJobs(b.id());
        if (aFree != bFree) {
            return aFree ? -1 : 1;
        }
        return Long.compare(b.arrival(), a.arrival());
    }

    /**
     * Waiting requests in admission order: arrival order (a preempted request first); with prefill
     * priority the first request without a token first, then the others in line (a victim queued
     * as if it arrived when preempted).
     */
    private List<Request> admissionOrder() {
        if (waiting.isEmpty()) {
            return List.of();   // the steady state of a decode batch: no copy per step
        }
        if (!prefillPriority()) {
            return new ArrayList<>(waiting);
        }
        List<Request> order = new ArrayList<>(waiting);
        order.sort(BY_QUEUED_AT);
        Request head = firstWithoutToken();
        if (head != null) {
            order.remove(head);
            order.addFirst(head);
        }
        return order;
    }

    private int admit(List<StepPlan.Item> items, int budget) {
        // Requests whose first token waits on the steps, besides the waiting ones: load-or-recompute's contention.
        int prefilling = loading.size();
        for (Request q : running) {
            prefilling += q.numComputed() < q.promptLength() ? 1 : 0;
        }
        reservations.startPass();
        for (Iterator<Request> it = admissionOrder().iterator(); it.hasNext() && budget > 0
                && running.size() + loading.size() < config.maxRunning(); ) {
            Request r = it.next();
            if (offload != null && offload.hasJobs(r.id())) {
                continue; // §3.6: not re-admitted while its earlier jobs are in flight
            }
            int hitBlocks = kv.prefixHitBlocks(r.blockKeys(), r.numTokens());
            Contention contention = offload == null ? null
                    : new Contention(prefilling + waiting.size() - 1, !running.isEmpty(), config.maxBatchTokens());
            Lookup ext = offload == null ? new Lookup.Miss()
                    : offload.decide(r, hitBlocks, offload.lookup(r, hitBlocks), contention); // load only what is faster
            if (ext instanceof Lookup.Promote p) {
                ext = offload.promote(r, hitBlocks, p); // disk -> host first; the request asks again later
            }
            if (ext instanceof Lookup.Wait) {
                continue;
            }
            int start = hitBlocks * config.blockSize();
            int take = 0; // blocks a request passing a waiting one is charged (BlockReservations)
            if (ext instanceof Lookup.Hit hit) {
                int end = (hitBlocks + hit.blocks()) * config.blockSize();
                take = reservations.mayPass(r, hitBlocks);
                if (take < 0) {
                    break; // it would take blocks a waiting request is owed
                }
                if (!kv.admit(r.id(), r.blockKeys(), hitBlocks, end)) {
                    int missing = kv.blocksShort(r.blockKeys(), hitBlocks, end) + reservations.owedToPassers(r.id());
                    BlockWait w = offload.whenBlocksShort(r, hitBlocks, hit, missing, reservations.waitedNanos(r.id()), contention);
                    if (w == BlockWait.WAIT) {
                        reservations.hold(r, hitBlocks, hit, missing, contention);
                        continue; // neither load nor recompute yet: those behind it pass, with the blocks it can spare
                    }
                    if (w == BlockWait.STALL) {
                        break;
                    }
                    ext = new Lookup.Miss(); // recompute: its first step needs fewer blocks
                }
            }
            if (ext instanceof Lookup.Hit hit) {
                reservations.passed(r, take);
                waiting.remove(r);
                reservations.forget(r.id());
                r.noteAdmission();
                prefilling++;
                noteHit(r, start);
                var byTier = offload.startLoad(r, hitBlocks, hit.blocks(), kv.blockTables(r.id()));
                // Every admission's loads, a re-admission after preemption too (they sum to
                // OffloadStats.externalHitTokens); reports of hits take the first admission's only.
                byTier.forEach(r::addExternalHitTokens);
                r.setNumComputed(start);
                r.setStatus(Request.Status.LOADING);
                loading.put(r.id(), r);
                continue;
            }
            int n = Math.min(r.numTokens() - start, budget);
            take = reservations.mayPass(r, hitBlocks);
            if (take < 0) {
                break; // it would take blocks a waiting request is owed
            }
            if (!kv.admit(r.id(), r.blockKeys(), hitBlocks, start + n)) {
                break;
            }
            reservations.passed(r, take);
            waiting.remove(r);
            reservations.forget(r.id());
            r.noteAdmission();
            prefilling++;
            noteHit(r, start);
            r.setNumComputed(start);
            r.setStatus(Request.Status.RUNNING);
            running.add(r);
            items.add(new StepPlan.Item(r, start, n));
            budget -= n;
        }
        return budget;
    }

    /** A request reports the device hit of its first admission (a recompute after preemption hits its own blocks). */
    private static void noteHit(Request r, int deviceHitTokens) {
        if (r.preemptions() == 0) {
            r.setDeviceHitTokens(deviceHitTokens);
        }
    }

    /**
     * A parked request's load ended: blocks up to {@code kvWritten} positions hold verified KV;
     * it runs from there (recomputing whatever the load did not bring).
     *
     * @return the request, or null if it is no longer parked (aborted meanwhile)
     */
    Request loadEnded(long requestId, int kvWritten) {
        Request r = loading.remove(requestId);
        if (r == null) {
            return null;
        }
        r.setNumComputed(kvWritten);
        r.setStatus(Request.Status.RUNNING);
        running.add(r);
        return r;
    }

    /**
     * Releases a running or parked request's blocks and puts it first in line to be recomputed.
     * No-op for a request that is not running or parked (a second preemption changes nothing).
     */
    void preempt(Request r) {
        if (r.status() != Request.Status.RUNNING && r.status() != Request.Status.LOADING) {
            return;
        }
        running.remove(r);
        loading.remove(r.id());
        kv.free(r.id());
        r.setNumComputed(0);
        r.setStatus(Request.Status.WAITING);
        r.countPreemption();
        r.setQueuedAt(arrivals++); // with prefill priority: in line behind those already waiting
        waiting.addFirst(r);
    }

    /** Removes a finished or aborted request and releases its blocks (jobs keep their own). */
    void remove(Request r) {
        reservations.forget(r.id());
        running.remove(r);
        waiting.remove(r);
        loading.remove(r.id());
        kv.free(r.id());
    }
}

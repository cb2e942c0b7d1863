package io.kvtier.engine;

import io.kvtier.kv.KvCacheManager;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * Continuous batching under a token budget per step: requests already running go first (their
 * decode tokens and the rest of their chunked prefill), then waiting requests are admitted in
 * arrival order with a device prefix-cache lookup, each computing as many prompt tokens as the
 * budget leaves (chunked prefill). When a running request cannot get a block, the newest running
 * request is preempted (its blocks are released; it is recomputed later, reusing whatever of its
 * prefix is still cached). Engine thread only.
 */
public final class Scheduler {

    private final EngineConfig config;
    private final KvCacheManager kv;
    private final Deque<Request> waiting = new ArrayDeque<>();
    private final List<Request> running = new ArrayList<>();

    public Scheduler(EngineConfig config, KvCacheManager kv) {
        this.config = config;
        this.kv = kv;
    }

    public void add(Request r) {
        waiting.addLast(r);
    }

    public List<Request> running() {
        return running;
    }

    public Deque<Request> waiting() {
        return waiting;
    }

    public boolean hasWork() {
        return !waiting.isEmpty() || !running.isEmpty();
    }

    /** Decides this step's work; allocates the device blocks it needs. */
    public StepPlan schedule() {
        int budget = config.maxBatchTokens();
        List<StepPlan.Item> items = new ArrayList<>();
        int preempted = 0;
        for (int i = 0; i < running.size() && budget > 0; ) {
            Request r = running.get(i);
            int n = Math.min(r.numTokens() - r.numComputed(), budget);
            boolean self = false;
            while (!kv.grow(r.id(), r.numComputed() + n)) {
                Request victim = running.getLast();
                preempt(victim);
                preempted++;
                if (victim == r) {
                    self = true;
                    break;
                }
            }
            if (self) {
                break;
            }
            items.add(new StepPlan.Item(r, r.numComputed(), n));
            budget -= n;
            i++;
        }
        // A step that had to preempt admits nobody: the freed blocks go to those still running.
        while (preempted == 0 && budget > 0 && !waiting.isEmpty() && running.size() < config.maxRunning()) {
            Request r = waiting.peekFirst();
            int hitBlocks = kv.prefixHitBlocks(r.blockKeys(), r.numTokens());
            int start = hitBlocks * config.blockSize();
            int n = Math.min(r.numTokens() - start, budget);
            if (!kv.admit(r.id(), r.blockKeys(), hitBlocks, start + n)) {
                break;
            }
            waiting.removeFirst();
            if (r.preemptions() == 0) {
                r.setDeviceHitTokens(start);
            }
            r.setNumComputed(start);
            r.setStatus(Request.Status.RUNNING);
            running.add(r);
            items.add(new StepPlan.Item(r, start, n));
            budget -= n;
        }
        return new StepPlan(List.copyOf(items), preempted);
    }

    /** Releases a running request's blocks and puts it first in line to be recomputed. */
    void preempt(Request r) {
        running.remove(r);
        kv.free(r.id());
        r.setNumComputed(0);
        r.setStatus(Request.Status.WAITING);
        r.countPreemption();
        waiting.addFirst(r);
    }

    /** Removes a finished or aborted request and releases its blocks. */
    void remove(Request r) {
        running.remove(r);
        waiting.remove(r);
        kv.free(r.id());
    }
}

package io.kvtier.engine;

import io.kvtier.kv.BlockHasher;
import io.kvtier.kv.BlockPool;
import io.kvtier.kv.KvCacheManager;
import io.kvtier.kv.BlockKey;
import io.kvtier.offload.LoadDone;
import io.kvtier.offload.OffloadScheduler;
import io.kvtier.tier.KvEvents;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The inference engine: one step at a time, schedule -> execute -> commit (ARCHITECTURE §2).
 * Not thread-safe: the engine thread owns it. The device pool is created and closed by the
 * engine; the model runner is given (it writes KV into {@link #pool()}'s slab).
 */
public final class Engine implements AutoCloseable {

    private final EngineConfig config;
    private final BlockPool pool;
    private final KvCacheManager kv;
    /** (request id, group) -> block table, for the offload scheduler's commits (one object, not one per call). */
    private final OffloadScheduler.GroupTables blockTables;
    private final Scheduler scheduler;
    private final ModelRunner runner;
    private final BlockHasher hasher;
    private final OffloadScheduler offload;
    private final Map<Long, Request> active = new HashMap<>();
    /** Requests to abort at the next step (a set: the step need not scan every active request). */
    private final java.util.Set<Long> abortsPending = new java.util.LinkedHashSet<>();
    private final EngineStats stats = new EngineStats();
    private final KvEvents events;

    /**
     * @param pool   the device pool, created for this engine (closed with it)
     * @param runner computes KV into {@code pool}'s slab
     * @param hasher block keys of this engine's namespace
     */
    public Engine(EngineConfig config, BlockPool pool, ModelRunner runner, BlockHasher hasher) {
        this(config, pool, runner, hasher, null);
    }

    /**
     * An engine with offloading: {@code offload} was built on {@code pool}; the engine closes it.
     */
    public Engine(EngineConfig config, BlockPool pool, ModelRunner runner, BlockHasher hasher, OffloadScheduler offload) {
        this(config, pool, runner, hasher, offload, null);
    }

    /**
     * An engine whose device prefix cache reports its changes to {@code events} (tier
     * {@value KvEvents#DEVICE}): the same {@link KvEvents} the offload tiers were built with, so
     * that one sequence orders every tier's events. Null: device events are not reported.
     */
    public Engine(EngineConfig config, BlockPool pool, ModelRunner runner, BlockHasher hasher, OffloadScheduler offload,
                  KvEvents events) {
        this(config, new KvCacheManager(pool, config.prefixCaching()), runner, hasher, offload, events);
    }

    /**
     * An engine over the device pools of {@code kv}, one per KV group (created for this engine and
     * closed with it). Device events are those of group 0, whose keys are the chain keys.
     *
     * With several KV groups, {@code offload} is group 0's scheduler with one part per window group
     * ({@link OffloadScheduler#ofGroups}).
     *
     * @throws IllegalArgumentException if a pool's block size or the prefix-caching switch is not
     *         the config's, or if {@code offload} does not have a part for every window group
     */
    public Engine(EngineConfig config, KvCacheManager kv, ModelRunner runner, BlockHasher hasher, OffloadScheduler offload,
                  KvEvents events) {
        BlockPool pool = kv.pool();
        if (pool.layout().blockSize() != config.blockSize()) {
            throw new IllegalArgumentException("pool block size " + pool.layout().blockSize() + " != config " + config.blockSize());
        }
        if (kv.prefixCaching() != config.prefixCaching()) {
            throw new IllegalArgumentException("KV cache manager with prefix caching " + kv.prefixCaching() + ", config " + config.prefixCaching());
        }
        if (offload != null && offload.windowParts().size() != kv.groups().size() - 1) {
            throw new IllegalArgumentException("offloading a model with " + kv.groups().size()
                    + " KV groups needs a scheduler part per window group, got " + offload.windowParts().size());
        }
        this.config = config;
        this.pool = pool;
        this.kv = kv;
        this.blockTables = kv::blockTable;
        this.offload = offload;
        this.scheduler = new Scheduler(config, kv, offload);
        this.runner = runner;
        this.hasher = hasher;
        this.events = events;
        if (events != null) {
            pool.onEvictions(events::deviceRemoved);
        }
    }

    public EngineConfig config() {
        return config;
    }

    /** The device pool of KV group 0 (the only one of a model without sliding-window layers). */
    public BlockPool pool() {
        return pool;
    }

    /** Bytes reserved for the device pools of every KV group. */
    public long devicePoolBytes() {
        long n = 0;
        for (int g = 0; g < kv.groups().size(); g++) {
            n += kv.pool(g).slab().byteSize();
        }
        return n;
    }

    /** Bytes of the device pools of every KV group now resident in memory. */
    public long devicePoolResidentBytes() {
        long n = 0;
        for (int g = 0; g < kv.groups().size(); g++) {
            n += kv.pool(g).residentBytes();
        }
        return n;
    }

    public KvCacheManager kvCacheManager() {
        return kv;
    }

    public Scheduler scheduler() {
        return scheduler;
    }

    public EngineStats stats() {
        return stats;
    }

    /** The parent key of every sequence's first block (the seed of this engine's key chain). */
    public BlockKey namespaceSeed() {
        return hasher.namespaceSeed();
    }

    /** The offload scheduler, or null when offloading is off. */
    public OffloadScheduler offload() {
        return offload;
    }

    /**
     * Makes the calling thread ready to run steps ({@link ModelRunner#prepareThread}): for a thread
     * that steps the engine but did not build it, before its first step.
     */
    public void prepareThread() {
        runner.prepareThread();
    }

    /** Token positions of the model's context (its longest sequence). */
    public int maxPositions() {
        return runner.maxPositions();
    }

    /**
     * Checks that a request of this size can run: its prompt fits the model's context and it fits
     * the device pool even alone. Reads only immutable settings, so any thread may call it.
     *
     * @throws RequestDoesNotFitException if not (the message says by how much)
     */
    public void checkFits(int promptLength, int maxTokens) {
        int maxPos = runner.maxPositions();
        long positions = kvPositions(promptLength, maxTokens, maxPos);
        int blocks = pool.layout().blocksFor(positions);
        if (promptLength > maxPos || blocks > pool.numBlocks()) {
            throw new RequestDoesNotFitException(promptLength, maxTokens, maxPos, positions, blocks, pool.numBlocks(),
                    config.blockSize());
        }
    }

    /**
     * KV slots a request of {@code promptLength} tokens and at most {@code maxTokens} new ones can
     * write: every position but the last sampled token's (it is never fed back), at most the
     * model's {@code maxPositions}. What {@link #checkFits} sizes, and generate's default pool.
     */
    public static long kvPositions(int promptLength, int maxTokens, int maxPositions) {
        return Math.min((long) promptLength + maxTokens - 1, maxPositions);
    }

    /**
     * Before the first step, makes resident the device blocks that {@code requests} can write
     * (each request's KV slots, as {@link #checkFits} counts them, summed; at most every pool's
     * size, at most {@code maxBytes} of each pool): their first writes then take no page faults in
     * the steps ({@link BlockPool#prefault}). For a pool sized to its job, as generate's default
     * is; the bound keeps a large {@code --max-tokens} that a stop token ends early from making
     * memory resident (and paying its faults up front) that the run never writes.
     *
     * @throws IllegalStateException after the first step
     */
    public void prefault(List<Request> requests, long maxBytes) {
        long blocks = 0;
        for (Request r : requests) {
            blocks += pool.layout().blocksFor(kvPositions(r.promptLength(), r.maxTokens(), runner.maxPositions()));
        }
        for (int g = 0; g < kv.groups().size(); g++) {
            BlockPool p = kv.pool(g);
            p.prefault((int) Math.min(Math.min(blocks, maxBytes / p.layout().bytesPerBlock()), Integer.MAX_VALUE));
        }
    }

    /**
     * Checks what {@link #submit} checks of a request's size, without submitting it: a caller
     * that submits prompts one after another can refuse a bad one before running any.
     *
     * @throws RequestDoesNotFitException as {@link #checkFits(int, int)}
     */
    public void checkFits(Request r) {
        checkFits(r.promptLength(), r.maxTokens());
    }

    /**
     * Queues a request.
     *
     * @throws IllegalArgumentException if its prompt exceeds the model's context, or if it could
     *         never fit in the device pool even alone (see {@link #checkFits})
     */
    public void submit(Request r) {
        checkFits(r.promptLength(), r.maxTokens());
        if (active.putIfAbsent(r.id(), r) != null) {
            throw new IllegalArgumentException("request id " + r.id() + " is already in the engine");
        }
        r.extendKeys(hasher, config.blockSize());
        stats.requests++;
        stats.promptTokens += r.promptLength();
        scheduler.add(r);
    }

    /** Asks to abort a request; it finishes with {@link FinishReason#ABORT} at the next step. */
    public void abort(long requestId) {
        if (active.containsKey(requestId)) {
            abortsPending.add(requestId);
        }
    }

    public boolean hasWork() {
        return scheduler.hasWork();
    }

    /**
     * Runs one step.
     *
     * @return the requests that finished in this step
     */
    public List<Request> step() {
        List<Request> done = new ArrayList<>();
        if (offload != null) {
            resume(offload.poll());
        }
        for (long id : abortsPending) {
            Request r = active.get(id);
            if (r != null) {
                finish(r, FinishReason.ABORT, done);
            }
        }
        abortsPending.clear();
        StepPlan plan = scheduler.schedule();
        stats.preemptions += plan.preemptions();
        if (plan.isEmpty()) {
            return done;
        }
        stats.steps++;
        float[][] logits = execute(plan);
        commit(plan, logits, done);
        return done;
    }

    /** Runs steps until no request is left; returns them in the order they finished. */
    public List<Request> runToCompletion() {
        List<Request> done = new ArrayList<>();
        while (hasWork()) {
            done.addAll(advance());
        }
        return done;
    }

    /**
     * Makes progress once: runs a step, or, when nothing can run until a transfer ends (a load
     * parks its request, stores hold blocks), waits for one. For a caller that acts between steps
     * (prints each finished request, stops on a signal).
     *
     * @return the requests that finished, in the order they finished
     * @throws IllegalStateException if no progress is possible (a bug: {@link #submit} refuses
     *         requests that could never fit)
     */
    public List<Request> advance() {
        long stepsBefore = stats.steps;
        List<Request> finished = step();
        if (finished.isEmpty() && stats.steps == stepsBefore && hasWork()) {
            if (offload != null && offload.busy()) {
                resume(offload.awaitAny(offload.config().jobDeadline()));
            } else {
                throw new IllegalStateException("engine made no progress: " + scheduler.waiting().size()
                        + " waiting, " + scheduler.running().size() + " running, " + pool.freeCount() + " free blocks");
            }
        }
        return finished;
    }

    private float[][] execute(StepPlan plan) {
        List<ScheduledChunk> chunks = new ArrayList<>(plan.items().size());
        int[] starts = new int[plan.items().size()];
        int[] counts = new int[starts.length];
        for (StepPlan.Item it : plan.items()) {
            Request r = it.request();
            int[] tokens = r.tokens(it.startPos(), it.startPos() + it.numTokens());
            starts[chunks.size()] = it.startPos();
            counts[chunks.size()] = it.numTokens();
            chunks.add(kv.groups().size() == 1
                    ? new ScheduledChunk(r.id(), tokens, it.startPos(), kv.blockTable(r.id()), it.samples())
                    : new ScheduledChunk(r.id(), tokens, it.startPos(), kv.blockTables(r.id()), it.samples()));
        }
        if (io.kvtier.tier.remote.RemoteTrace.ON) {
            io.kvtier.tier.remote.RemoteTrace.mark("forward: " + plan.totalTokens() + " tokens from position " + starts[0]);
        }
        long t0 = System.nanoTime();
        long c0 = offload == null ? 0 : offload.clockNanos();
        float[][] logits = runner.forward(chunks);
        if (io.kvtier.tier.remote.RemoteTrace.ON) {
            io.kvtier.tier.remote.RemoteTrace.mark("forward done");
        }
        stats.forwardNanos += System.nanoTime() - t0;
        if (offload != null) {
            // The step-time fit that load-or-recompute prices a recompute with.
            offload.onForward(io.kvtier.offload.StepShape.of(starts, counts), offload.clockNanos() - c0);
        }
        stats.computedTokens += plan.totalTokens();
        return logits;
    }

    private void commit(StepPlan plan, float[][] logits, List<Request> done) {
        for (int i = 0; i < plan.items().size(); i++) {
            StepPlan.Item it = plan.items().get(i);
            Request r = it.request();
            r.setNumComputed(it.startPos() + it.numTokens());
            FinishReason reason = null;
            if (it.samples()) {
                int token = Sampler.sample(logits[i], r.sampling(), r.rng());
                if (config.isStopToken(token)) {
                    reason = FinishReason.STOP;
                } else {
                    r.append(token);
                    stats.generatedTokens++;
                    r.extendKeys(hasher, config.blockSize());
                    if (r.stopCondition().stopsAfter(token)) {
                        reason = FinishReason.STOP;
                    } else if (r.numOutputTokens() >= r.maxTokens() || r.numTokens() > runner.maxPositions()) {
                        // The context limit: the token sampled at the last position has no KV slot.
                        reason = FinishReason.LENGTH;
                    }
                }
            }
            cacheFullBlocks(r, r.numComputed());
            if (offload != null) {
                // Stores are decided here, after the forward pass, from the KV really written (§3.1),
                // for finishing requests too, before their blocks are released.
                offload.onCommit(r, r.numComputed(), blockTables);
            }
            kv.slide(r.id(), r.numComputed()); // window groups give back blocks no later query reads (cached ones stay cached)
            if (reason != null) {
                finish(r, reason, done);
            }
        }
        if (offload != null) {
            offload.submitStores(); // one store job for every request that completed a chunk in this step
        }
    }

    /** Parked requests whose loads ended continue from the KV that was really loaded. */
    private void resume(List<LoadDone> loads) {
        for (int i = 0; i < loads.size(); i++) {   // indexed: an iterator per step even when none ended
            LoadDone d = loads.get(i);
            int kvWritten = (d.firstBlock() + d.goodBlocks()) * config.blockSize();
            Request r = scheduler.loadEnded(d.requestId(), kvWritten);
            if (r == null) {
                continue;
            }
            if (!d.success()) {
                // The reported hit is what was not computed: only the blocks really loaded (a
                // re-admission's loss comes off the every-admission count alone: Request says which).
                d.lostTokensByTier().forEach((tier, n) -> r.addExternalHitTokens(tier, -n));
            }
            // Window groups first give back what is before the window at kvWritten: blocks allocated
            // for the load that no group loaded (below its window) must never enter the prefix cache.
            kv.slide(r.id(), kvWritten);
            // Loaded blocks hold verified KV under their keys: the device prefix cache may share them.
            cacheFullBlocks(r, kvWritten);
        }
    }

    /** Registers the request's full written blocks in the device prefix cache and reports the new keys. */
    private void cacheFullBlocks(Request r, int kvWritten) {
        List<Integer> added = kv.cacheFullBlocks(r.id(), r.blockKeys(), kvWritten);
        if (events == null || added.isEmpty()) {
            return;
        }
        int bs = config.blockSize();
        int start = 0;
        for (int i = 1; i <= added.size(); i++) {
            // One event per run of consecutive blocks: each is a chain whose parent is the block before it.
            if (i == added.size() || added.get(i) != added.get(i - 1) + 1) {
                int first = added.get(start);
                int end = added.get(i - 1) + 1;
                BlockKey parent = first == 0 ? hasher.namespaceSeed() : r.blockKeys().get(first - 1);
                List<Integer> tokens = new ArrayList<>((end - first) * bs);
                for (int p = first * bs; p < end * bs; p++) {
                    tokens.add(r.tokenAt(p));
                }
                events.deviceStored(r.blockKeys().subList(first, end), parent, tokens);
                start = i;
            }
        }
    }

    /**
     * Checks the device KV invariants: every group's pool ({@link BlockPool#checkInvariants}), and
     * every request's tables hold a referenced block at every index its next query reads and, in
     * a window group, nothing before that query's window. Throws IllegalStateException naming the
     * first broken one; tests call it after every step.
     */
    public void checkKvInvariants() {
        kv.checkInvariants(id -> active.get(id).numComputed());
    }

    /** What the metrics read of this engine now (engine thread; the snapshot is immutable). */
    public EngineSnapshot snapshot() {
        return EngineSnapshot.of(this);
    }

    /**
     * Drops every cached block: the device prefix cache and, with offloading, every tier entry.
     * Loads in flight are abandoned: their requests give up the target blocks and recompute.
     */
    public void resetCache() {
        kv.resetPrefixCache();
        if (offload != null) {
            for (LoadDone abandoned : offload.resetCache()) {
                Request r = scheduler.loading().get(abandoned.requestId());
                if (r != null) {
                    abandoned.lostTokensByTier().forEach((tier, n) -> r.addExternalHitTokens(tier, -n));
                    scheduler.preempt(r);
                }
            }
        }
    }

    /**
     * Waits up to {@code timeout} for at least one transfer to end and applies what ended (parked
     * requests whose loads ended run at the next step). Returns at once when none is in flight.
     */
    public void awaitTransfers(java.time.Duration timeout) {
        if (offload != null && offload.busy()) {
            resume(offload.awaitAny(timeout));
        }
    }

    /**
     * Housekeeping for a loop with no request to step (a server between requests), called often:
     * applies the transfers that ended (stores become readable in their tier) and takes in what
     * the disk tier's scans found, as a step does first. Never blocks.
     */
    public void idle() {
        if (offload != null) {
            resume(offload.poll());
        }
    }

    /**
     * Waits until every transfer in flight has ended and applies the results (stores become
     * readable in their tier). Parked requests whose loads end here run at the next step.
     */
    public void drainTransfers() {
        while (offload != null && offload.busy()) {
            resume(offload.awaitAny(offload.config().jobDeadline()));
        }
    }

    /**
     * Drops the device prefix cache only; offload tiers keep their entries. With lazy stores, the
     * chunks not stored yet are stored first (a reset evicts every block, so each reaches the
     * eviction horizon); their store jobs run on after the reset.
     */
    public void resetDevicePrefixCache() {
        if (offload != null) {
            offload.beforeDeviceCacheReset();
        }
        kv.resetPrefixCache();
    }

    private void finish(Request r, FinishReason reason, List<Request> done) {
        if (offload != null) {
            offload.onFinished(r.id());
        }
        scheduler.remove(r);
        r.finish(reason);
        active.remove(r.id());
        stats.finished++;
        stats.finishedBy[reason.ordinal()]++;
        stats.deviceHitTokens += r.deviceHitTokens();
        stats.queriedTokens += r.promptLength();
        if (offload != null) {
            // The first admission's hits, as the client's cached_tokens: a re-admission after a
            // preemption reloads the request's own KV, no hit of its prompt (and would pass the queries).
            stats.externalQueriedTokens += r.promptLength() - r.deviceHitTokens();
            stats.externalHitTokens += r.promptExternalHitTokens();
            r.promptExternalHitTokensByTier().forEach((tier, n) -> stats.externalHitTokensByTier.merge(tier, (long) n, Long::sum));
        }
        done.add(r);
    }

    /** Closes the runner, the offload scheduler (its transfer threads and tiers), then the device pools. */
    @Override
    public void close() {
        runner.close();
        if (offload != null) {
            offload.close();
        }
        for (int g = 0; g < kv.groups().size(); g++) {
            kv.pool(g).close();
        }
    }
}

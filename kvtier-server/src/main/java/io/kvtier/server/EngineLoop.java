package io.kvtier.server;

import io.kvtier.engine.Engine;
import io.kvtier.engine.Request;
import io.kvtier.kv.ExtraKeys;
import io.kvtier.text.Plural;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * The engine on its own thread (ARCHITECTURE §5). Requests arrive through one queue of commands;
 * each request's tokens leave through its {@link TokenSink}, after every step. The engine and
 * everything below it are touched by the engine thread only; other threads talk to it through
 * {@link #submit}, {@link #abort} and {@link #call}.
 *
 * <p>An abort is applied at the start of the next step: the request's device blocks and tier pins
 * are released there. {@link #shutdown} stops accepting, lets in-flight requests finish within a
 * grace period, aborts the rest, waits for transfers and closes the engine (its tiers included).
 * If a step throws, the loop fails every request, closes the engine and {@link #alive()} turns
 * false.
 */
public final class EngineLoop implements AutoCloseable {

    /**
     * Called on the engine thread after every turn of the loop: after each step, and after the
     * commands and transfer completions applied while idle (so metrics and KV events also see a
     * cache reset or a store that ended between steps). Must not block.
     */
    public interface StepListener {
        /** @param finished the requests that ended in this step (aborted ones included; empty when idle) */
        void onStep(Engine engine, List<Request> finished);
    }

    private sealed interface Command {
    }

    private record Submit(Request request, TokenSink sink) implements Command {
    }

    private record Abort(long id) implements Command {
    }

    private record Call<T>(Function<Engine, T> fn, CompletableFuture<T> result) implements Command {
        void run(Engine e) {
            try {
                result.complete(fn.apply(e));
            } catch (Throwable t) {
                result.completeExceptionally(t);
            }
        }
    }

    /** One request in the engine and how much of its output the sink has seen. */
    private static final class Active {
        final Request request;
        final TokenSink sink;
        int emitted;
        boolean admitted;

        Active(Request request, TokenSink sink) {
            this.request = request;
            this.sink = sink;
        }
    }

    /** Idle wait for a command; also how often the loop applies finished transfers while idle. */
    private static final long IDLE_POLL_MILLIS = 20;

    private final Engine engine;
    private final int maxWaiting;
    /** Requests in flight at most: the engine's max running plus {@link #maxWaiting}. */
    private final int maxInFlight;
    private final LinkedBlockingQueue<Command> inbox = new LinkedBlockingQueue<>();
    private final Map<Long, Active> active = new LinkedHashMap<>();
    private final List<StepListener> listeners = new CopyOnWriteArrayList<>();
    private volatile java.util.function.UnaryOperator<TokenSink> sinkDecorator = java.util.function.UnaryOperator.identity();
    private final AtomicLong nextId = new AtomicLong();
    /** Requests submitted but not yet admitted (running or loading): the waiting queue. */
    private final AtomicInteger waiting = new AtomicInteger();
    /** Requests submitted and not yet finished or failed: what admission counts. */
    private final AtomicInteger inFlight = new AtomicInteger();
    private final Object gate = new Object();
    private final Thread thread;
    /** Guarded by {@link #gate}: false once shutdown began or the loop ended. */
    private boolean accepting = true;
    /** Guarded by {@link #gate}: true once the loop has failed its queued commands for good. */
    private boolean ended;
    private volatile long stopDeadlineNanos;
    private volatile boolean stopping;
    private volatile String deathCause;

    /**
     * @param engine     the engine; from now on owned by the loop (closed when it ends)
     * @param maxWaiting requests that may wait beyond the engine's max running ones: {@link #submit}
     *                   rejects with {@link Rejected.Reason#QUEUE_FULL} when max running + this many
     *                   are in flight. Counted when a request arrives, so admission never depends
     *                   on whether the engine thread has taken the earlier ones in yet. 0: no
     *                   waiting queue, a request beyond the max running ones is rejected at once
     */
    public EngineLoop(Engine engine, int maxWaiting) {
        if (maxWaiting < 0) {
            throw new IllegalArgumentException("max waiting requests must be at least 0, got " + maxWaiting);
        }
        this.engine = engine;
        this.maxWaiting = maxWaiting;
        this.maxInFlight = (int) Math.min(Integer.MAX_VALUE, (long) engine.config().maxRunning() + maxWaiting);
        this.thread = Thread.ofPlatform().name("kvtier-engine").unstarted(this::run);
    }

    /** Adds a listener; call before {@link #start}. */
    public void addStepListener(StepListener l) {
        listeners.add(l);
    }

    /**
     * Wraps the sink of every request submitted from now on, in {@link #submit}'s calling thread at
     * the request's arrival (metrics time requests from there). Call before {@link #start}.
     */
    public void setSinkDecorator(java.util.function.UnaryOperator<TokenSink> decorator) {
        this.sinkDecorator = java.util.Objects.requireNonNull(decorator, "decorator");
    }

    public EngineLoop start() {
        thread.start();
        return this;
    }

    /** The engine's model context in token positions (immutable, any thread). */
    public int maxPositions() {
        return engine.maxPositions();
    }

    /** What one request can use: the context, or less when the device pool is smaller (immutable, any thread). */
    public ContextLimit contextLimit() {
        return new ContextLimit(engine.maxPositions(), engine.pool().numBlocks(), engine.config().blockSize());
    }

    /**
     * Checks that a request can ever run (any thread).
     *
     * @throws IllegalArgumentException if the prompt exceeds the context or the request could not
     *         fit in the device pool alone
     */
    public void checkFits(GenerationRequest g) {
        engine.checkFits(g.promptIds().length, g.maxTokens());
    }

    /**
     * Queues a request; its output goes to {@code sink} (on the engine thread).
     *
     * @return the request's id (for {@link #abort})
     * @throws Rejected                 when the waiting queue is full, the loop is stopping or dead
     * @throws IllegalArgumentException when the request can never run ({@link #checkFits})
     */
    public long submit(GenerationRequest g, TokenSink sink) throws Rejected {
        checkFits(g);
        synchronized (gate) {
            if (deathCause != null) {
                throw new Rejected(Rejected.Reason.ENGINE_DEAD, "the engine has stopped: " + deathCause);
            }
            if (!accepting) {
                throw new Rejected(Rejected.Reason.STOPPING, "the server is shutting down");
            }
            if (inFlight.get() >= maxInFlight) {
                throw new Rejected(Rejected.Reason.QUEUE_FULL, maxWaiting == 0
                        ? "all " + maxInFlight + " running places are taken and there is no waiting queue; retry later"
                        : "the waiting queue is full (" + Plural.count(maxWaiting, "request") + " waiting beyond "
                                + (maxInFlight - maxWaiting) + " running); retry later");
            }
            inFlight.incrementAndGet();
            waiting.incrementAndGet();
            long id = nextId.getAndIncrement();
            sink = sinkDecorator.apply(sink);
            inbox.add(new Submit(new Request(id, g.promptIds(), g.maxTokens(), g.sampling(), ExtraKeys.salt(g.cacheSalt()), g.stop()), sink));
            return id;
        }
    }

    /** Aborts a request (its client went away); applied at the engine's next step. Any thread. */
    public void abort(long id) {
        inbox.add(new Abort(id));
    }

    /**
     * Runs {@code fn} on the engine thread between two steps (engine state may be read and changed
     * there). The future fails if the loop has ended.
     */
    public <T> CompletableFuture<T> call(Function<Engine, T> fn) {
        CompletableFuture<T> f = new CompletableFuture<>();
        synchronized (gate) {
            if (ended) {
                f.completeExceptionally(new IllegalStateException("the engine loop has ended"));
                return f;
            }
            inbox.add(new Call<>(fn, f));
        }
        return f;
    }

    /**
     * Drops the device prefix cache; with {@code offloadToo} also every offload tier entry (loads in
     * flight are abandoned and their requests recompute).
     */
    public CompletableFuture<Void> resetPrefixCache(boolean offloadToo) {
        return call(e -> {
            if (offloadToo) {
                e.resetCache();
            } else {
                e.resetDevicePrefixCache();
            }
            return null;
        });
    }

    /** True while the engine thread runs and has not failed. */
    public boolean alive() {
        return thread.isAlive() && deathCause == null;
    }

    /** False once a shutdown began or the loop ended: {@link #submit} refuses new requests. */
    public boolean accepting() {
        synchronized (gate) {
            return accepting && deathCause == null;
        }
    }

    /** Why the engine thread died, or null. */
    public String deathCause() {
        return deathCause;
    }

    /** Requests submitted and not yet admitted (any thread). */
    public int waitingCount() {
        return waiting.get();
    }

    /** Requests submitted and not yet finished or failed (any thread). */
    public int inFlightCount() {
        return inFlight.get();
    }

    /**
     * Graceful stop: new submits are rejected; requests in flight may finish for {@code grace},
     * then the rest are aborted; transfers are drained and the engine (with its tiers) is closed.
     * Blocks until the engine thread has ended.
     */
    public void shutdown(Duration grace) {
        synchronized (gate) {
            accepting = false;
        }
        stopDeadlineNanos = System.nanoTime() + grace.toNanos();
        stopping = true;
        inbox.add(new Abort(-1)); // wakes an idle loop
        try {
            thread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        if (thread.isAlive() || thread.getState() == Thread.State.NEW) {
            if (thread.getState() == Thread.State.NEW) {
                synchronized (gate) {
                    accepting = false;
                }
                engine.close();
                return;
            }
            shutdown(Duration.ZERO);
        }
    }

    private void run() {
        try {
            engine.prepareThread(); // the kernels' scratch now, not inside the first request's step
            while (true) {
                boolean idle = !engine.hasWork();
                if (!takeCommands(idle)) {
                    break;
                }
                if (stopping && System.nanoTime() - stopDeadlineNanos >= 0) {
                    for (long id : active.keySet()) {
                        engine.abort(id);
                    }
                }
                List<Request> finished = List.of();
                if (engine.hasWork()) {
                    finished = step();
                } else {
                    engine.idle(); // stores that ended, chunks a disk scan found: hits for the next request
                }
                for (StepListener l : listeners) {
                    l.onStep(engine, finished);
                }
            }
            engine.drainTransfers();
        } catch (Throwable t) {
            deathCause = t.toString();
            failAll("the engine failed: " + t);
            System.err.println("kvtier: engine thread failed (a bug): " + t);
            t.printStackTrace(System.err);
        } finally {
            synchronized (gate) {
                accepting = false;
                ended = true;
            }
            failQueued(deathCause == null ? "the server is shutting down" : "the engine failed: " + deathCause);
            engine.close();
        }
    }

    /**
     * Applies queued commands; when idle, first waits for one. Returns false when the loop should
     * end (stopping and nothing left in flight).
     */
    private boolean takeCommands(boolean idle) throws InterruptedException {
        if (idle && !stopping) {
            Command c = inbox.poll(IDLE_POLL_MILLIS, TimeUnit.MILLISECONDS);
            if (c != null) {
                apply(c);
            }
        }
        for (Command c; (c = inbox.poll()) != null; ) {
            apply(c);
        }
        return !(stopping && active.isEmpty());
    }

    private void apply(Command c) {
        switch (c) {
            case Submit s -> {
                try {
                    engine.submit(s.request());
                    active.put(s.request().id(), new Active(s.request(), s.sink()));
                } catch (IllegalArgumentException e) {
                    waiting.decrementAndGet();
                    inFlight.decrementAndGet();
                    s.sink().onFailed(e.getMessage());
                }
            }
            case Abort a -> engine.abort(a.id());
            case Call<?> call -> call.run(engine);
        }
    }

    private List<Request> step() {
        long before = engine.stats().steps();
        List<Request> finished = engine.step();
        if (finished.isEmpty() && engine.stats().steps() == before) {
            // Nothing could run: a parked load or a store holding blocks must end first.
            engine.awaitTransfers(Duration.ofMillis(IDLE_POLL_MILLIS));
        }
        emit(finished);
        return finished;
    }

    private void emit(List<Request> finished) {
        for (Active a : active.values()) {
            Request r = a.request;
            if (!a.admitted && r.status() != Request.Status.WAITING) {
                a.admitted = true;
                waiting.decrementAndGet();
            }
            int n = r.numOutputTokens();
            if (n > a.emitted) {
                a.sink.onTokens(r.tokens(r.promptLength() + a.emitted, r.promptLength() + n));
                a.emitted = n;
            }
        }
        for (Request r : finished) {
            Active a = active.remove(r.id());
            if (a == null) {
                continue;
            }
            if (!a.admitted) {
                waiting.decrementAndGet();
            }
            inFlight.decrementAndGet();
            int cached = r.deviceHitTokens() + r.promptExternalHitTokens(); // the first admission's: at most the prompt
            a.sink.onFinished(new Outcome(r.finishReason(), r.promptLength(), r.numOutputTokens(), cached));
        }
    }

    private void failAll(String message) {
        List<Active> all = new ArrayList<>(active.values());
        active.clear();
        for (Active a : all) {
            if (!a.admitted) {
                waiting.decrementAndGet();
            }
            inFlight.decrementAndGet();
            a.sink.onFailed(message);
        }
    }

    private void failQueued(String message) {
        failAll(message);
        for (Command c; (c = inbox.poll()) != null; ) {
            switch (c) {
                case Submit s -> {
                    waiting.decrementAndGet();
                    inFlight.decrementAndGet();
                    s.sink().onFailed(message);
                }
                case Call<?> call -> call.result().completeExceptionally(new IllegalStateException("the engine loop has ended"));
                case Abort a -> { }
            }
        }
    }
}

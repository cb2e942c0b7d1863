package io.kvtier.tier.remote;

import io.lettuce.core.SetArgs;
import io.lettuce.core.SslOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisKeyAsyncCommands;
import io.lettuce.core.api.async.RedisStringAsyncCommands;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.api.async.BaseRedisAsyncCommands;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * {@link RemoteStore} on Redis or Valkey through Lettuce, standalone or Cluster. Every command
 * has the settings' timeout; commands are refused (not queued) while disconnected, so a dead
 * server costs a failure at once. Each node (the master owning a key's slot; the one server when
 * standalone) has a {@link CircuitBreaker}; a failover moves a slot to a node with a closed one.
 * When a breaker's open period ends it is tried even with no operation to send, and so is a closed
 * one that has seen no success for as long ({@link BreakerTrials}): a store that dies or freezes
 * under an idle engine opens its breakers and says so without a request.
 * A server that cannot be reached at start leaves the store unavailable, and it reconnects in
 * the background, once per breaker period. Bad credentials or an ACL refusal
 * ({@code WRONGPASS}, {@code NOAUTH}, {@code NOPERM}, a password for a server without one) turn
 * the store off for good, reported once through {@code warn} as one line that holds no secret.
 */
public final class LettuceRemoteStore implements RemoteStore {

    static {
        LettuceResources.init(); // its system properties before Lettuce's and Netty's classes initialise
    }

    private static final RedisCodec<String, byte[]> CODEC = ChunkCodec.INSTANCE;
    private static final String NO_MASTER = RemoteNodes.NO_MASTER;
    /**
     * Deadline of a connection attempt (socket and handshake). The first connection of a process
     * loads the client's classes, which on a loaded machine takes seconds; a server that is down
     * refuses at once, so only a server that accepts but never answers takes this long, in the
     * background ({@link #open} waits at most {@link #openWait}).
     */
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);
    /** Least wait of {@link #open} for the first connection (see {@link #openWait}). */
    private static final Duration OPEN_WAIT_FLOOR = Duration.ofSeconds(3);
    /** Whether a plain-TCP standalone store writes its SETs itself ({@link RespSetConnection}); property for comparisons. */
    public static final boolean DIRECT_SETS = Boolean.parseBoolean(System.getProperty("kvtier.remote.directSets", "true"));
    /**
     * Least value of the SETs written directly: smaller ones go through Lettuce's batch, as fast
     * there at 64 KiB (docs/design-notes.md), and without a second client's query buffer on the
     * server, which counts against a small maxmemory (property {@code kvtier.remote.directSetMinBytes}).
     */
    public static final long DIRECT_SET_MIN_BYTES = Long.getLong("kvtier.remote.directSetMinBytes", 128 << 10);
    private final RemoteSettings settings;
    private final Consumer<String> warn;
    private final ClientResources resources;
    /** The standalone or cluster client, its servers, and the direct SETs' connection. */
    private final LettuceClients clients;
    private final Map<String, CircuitBreaker> breakers = new ConcurrentHashMap<>();
    private final CircuitBreaker connectBreaker;
    private final BreakerTrials trials;
    private final ReconnectReasons reconnects;
    /** Whether the line saying a node's breaker opened was printed and the one saying all closed again not yet. */
    private final java.util.concurrent.atomic.AtomicBoolean saidDown = new java.util.concurrent.atomic.AtomicBoolean();
    /** Whether the line about a full store (OOM refusals) was said: once a run. */
    private final java.util.concurrent.atomic.AtomicBoolean saidFull = new java.util.concurrent.atomic.AtomicBoolean();
    private final SetArgs setArgs;
    private final ValueLimit valueLimit;
    private volatile StatefulConnection<String, byte[]> connection;
    private volatile RedisStringAsyncCommands<String, byte[]> strings;
    private volatile RedisKeyAsyncCommands<String, byte[]> keys;
    private volatile boolean connecting;
    private volatile String offReason;
    private volatile String lastConnectError = "not connected yet";
    private volatile boolean closed;
    /** Owners that have yet to {@link #close}: one per {@link #retain} and the opener; the last closes the store. */
    private final java.util.concurrent.atomic.AtomicInteger owners = new java.util.concurrent.atomic.AtomicInteger(1);
    private boolean announceConnection; // guarded by this
    /** The outage's lines in order: a stop line may wait for its reason ({@link ReconnectReasons}), a return's for it. */
    private CompletableFuture<Void> lines = CompletableFuture.completedFuture(null); // guarded by this

    private LettuceRemoteStore(RemoteSettings settings, Consumer<String> warn) {
        this.settings = settings;
        this.warn = warn;
        this.valueLimit = new ValueLimit(settings.maxValueBytes());
        this.setArgs = settings.ttl().isZero() ? null : SetArgs.Builder.px(settings.ttl().toMillis());
        Duration connectTimeout = settings.timeout().compareTo(CONNECT_TIMEOUT) > 0 ? settings.timeout() : CONNECT_TIMEOUT;
        resources = LettuceResources.create();
        reconnects = new ReconnectReasons(resources);
        trials = new BreakerTrials(resources.eventExecutorGroup(), this::trial, settings.breakerOpen().toNanos());
        connectBreaker = new CircuitBreaker(1, settings.breakerOpen().toNanos(), b -> trials.schedule(null, b));
        clients = LettuceClients.create(settings, resources, connectTimeout);
    }

    /**
     * Opens the store and starts its first connection, waiting for it until {@link #openWait}
     * (a few operation deadlines) has passed without a sign of life (a TCP connection up, a
     * handshake answered; at most {@link #CONNECT_TIMEOUT} more once the first TCP connection is
     * up): a server that accepts TCP but never answers (frozen, or a
     * proxy in front of a dead one) would otherwise hold the caller for the whole handshake
     * deadline. A connection still pending then goes on in the background; until it succeeds the
     * store is unavailable (every operation refused as {@link RemoteFailure.Cause#UNAVAILABLE},
     * breaker state {@code open}), and once it does the store serves.
     *
     * @param warn where the one line goes when the tier turns itself off (bad credentials, ACL)
     *             or the server cannot be reached (or has not answered) at start
     */
    public static LettuceRemoteStore open(RemoteSettings settings, Consumer<String> warn) {
        LettuceRemoteStore s = new LettuceRemoteStore(settings, warn);
        Duration wait = openWait(settings.timeout());
        // The wait counts from the last sign of life: before the first TCP connection the client
        // loads its classes (seconds on a loaded machine) and a refused connection fails by
        // itself, with its cause; after it, a cluster answers in rounds (the seeds' handshakes and
        // topology, then the cluster connection's own), each of which may take seconds under
        // load, so a store still answering is waited for while a frozen one is not.
        CompletableFuture<Object> tcpUp = new CompletableFuture<>();
        java.util.concurrent.atomic.AtomicLong lastSign = new java.util.concurrent.atomic.AtomicLong();
        var subscription = s.resources.eventBus().get()
                .filter(e -> e instanceof io.lettuce.core.event.connection.ConnectedEvent
                        || e instanceof io.lettuce.core.event.connection.ConnectionActivatedEvent)
                .subscribe(e -> {
                    lastSign.set(System.nanoTime());
                    tcpUp.complete(e);
                });
        CompletableFuture<Void> first = s.connect();
        s.trials.watchQuiet(s::watched);
        boolean answered;
        try {
            // A failed connect completes too: connect() records its failures itself.
            answered = LettuceResources.awaitAtMost(CompletableFuture.anyOf(first, tcpUp), CONNECT_TIMEOUT.toMillis())
                    && LettuceResources.awaitWhileAlive(first, lastSign, wait, CONNECT_TIMEOUT);
        } finally {
            subscription.dispose();
        }
        synchronized (s) { // against the pending connection's announceIfAwaited
            if (s.offReason == null && s.connection == null) {
                // Not an error (the engine serves with the store down and probes it back), but a
                // mistyped host or port must not pass unnoticed until someone reads the summary.
                List<String> urls = settings.urls().stream().map(RemoteSettings::withPort).toList();
                warn.accept("remote tier: cannot reach " + String.join(", ", urls) + " ("
                        + (answered ? s.lastConnectError : "no answer within " + wait.toMillis() + " ms; still connecting")
                        + ")" + RemoteErrors.tlsHint(settings, s.lastConnectError) + "; every lookup misses until it answers");
                // The tier starts refusing: its first opening (a refused connection has counted it already).
                s.connectBreaker.trip(System.nanoTime());
                // The store may answer a moment later (a loaded machine, a server started after
                // the engine): say so then, as the line above promised.
                s.announceConnection = true;
            }
        }
        return s;
    }

    /**
     * How long {@link #open} waits for the first connection: 4 x the operation deadline, at least
     * {@link #OPEN_WAIT_FLOOR} (the first connection of a process also loads the client's classes,
     * which takes a second or more on a loaded machine), at most {@link #CONNECT_TIMEOUT}.
     */
    static Duration openWait(Duration timeout) {
        Duration w = timeout.multipliedBy(4);
        w = w.compareTo(OPEN_WAIT_FLOOR) < 0 ? OPEN_WAIT_FLOOR : w;
        return w.compareTo(CONNECT_TIMEOUT) > 0 ? CONNECT_TIMEOUT : w;
    }

    private CompletableFuture<Void> connect() {
        connecting = true;
        CompletionStage<? extends StatefulConnection<String, byte[]>> stage = settings.cluster()
                ? clients.clusterClient().refreshPartitionsAsync().thenCompose(v -> clients.clusterClient().connectAsync(CODEC))
                        .whenComplete((c, err) -> {
                            if (err == null) {
                                clients.clusterClient().setOptions(clients.connectedClusterOptions()); // connected: refreshes ask every node
                            }
                        })
                : clients.client().connectAsync(CODEC, clients.uris().get(0));
        stage = stage.thenCompose(conn -> LettuceClients.refuseUnwantedPassword(settings, conn)); // a refusal turns the tier off below
        return stage.toCompletableFuture().handle((conn, err) -> {
            try {
                if (err != null) {
                    String msg = RemoteErrors.messageOf(err);
                    lastConnectError = RemoteErrors.reasonOf(err);
                    if (closed) {
                        // Closing cuts a pending handshake short ("SSLEngine closed already"):
                        // that is no verdict on the store, and a line after the summary would
                        // contradict it.
                        return null;
                    }
                    String off = RemoteErrors.connectRefusal(settings, err, msg, lastConnectError);
                    if (off != null) {
                        turnOff(off);
                    } else {
                        connectBreaker.failure(System.nanoTime()); // a tier turned off opens no breaker
                    }
                    return null;
                }
                if (closed) {
                    conn.closeAsync();
                    return null;
                }
                adopt(conn);
                connectBreaker.success(System.nanoTime());
                announceIfAwaited();
                return null;
            } finally {
                connecting = false;
            }
        });
    }

    /** After {@link #open} said "still connecting": the one line saying the store now answers. */
    private synchronized void announceIfAwaited() {
        if (announceConnection) {
            announceConnection = false;
            warn.accept("remote tier: " + String.join(", ", settings.urls()) + " answered; lookups use it from now");
        }
    }

    @SuppressWarnings("unchecked")
    private void adopt(StatefulConnection<String, byte[]> conn) {
        if (conn instanceof StatefulRedisClusterConnection<String, byte[]> c) {
            strings = c.async();
            keys = c.async();
        } else {
            StatefulRedisConnection<String, byte[]> c = (StatefulRedisConnection<String, byte[]>) conn;
            strings = c.async();
            keys = c.async();
        }
        connection = conn;
        valueLimit.read(conn);
    }

    private synchronized void turnOff(String reason) {
        if (offReason == null) {
            offReason = reason;
            warn.accept("remote tier off: " + reason);
        }
    }

    /**
     * The nodes whose quiet {@link BreakerTrials#watchQuiet} checks: the one server, or the
     * masters serving slots; none before the first connection (its own breaker retries it) or
     * once the store is off or closed.
     */
    private Map<String, CircuitBreaker> watched() {
        StatefulConnection<String, byte[]> conn = connection;
        if (conn == null || offReason != null || closed) {
            return Map.of();
        }
        Map<String, CircuitBreaker> m = new java.util.HashMap<>();
        RemoteNodes.serving(conn).forEach(n -> m.put(n, breaker(n)));
        return m;
    }

    private CircuitBreaker breaker(String node) {
        return breakers.computeIfAbsent(node, n -> new CircuitBreaker(settings.failuresToOpen(), settings.breakerOpen().toNanos(),
                b -> trials.schedule(n, b)));
    }

    /**
     * The trial of a half-open breaker when its period ends, or of a quiet closed one
     * ({@link BreakerTrials}): the connection's is a connection attempt; a node's a PING, closed
     * by any answer (an error reply too: the server is up; PING, unlike a key's command, needs no
     * access to the tier's keys), failed as an operation would be otherwise (a quiet breaker's
     * failures open it and print the outage's line); a slot without a master fails again while it
     * has none (no command could reach it).
     */
    private void trial(String node, CircuitBreaker b) {
        StatefulConnection<String, byte[]> conn = connection;
        if (closed || offReason != null) {
            return;
        } else if (node == null) {
            if (conn == null && !connecting) {
                connect(); // its outcome closes or re-opens the breaker
            }
        } else if (conn instanceof StatefulRedisClusterConnection<String, byte[]> c
                && !TopologyRefresh.servesNow(c.getPartitions(), NO_MASTER).test(node)) {
            // a failed-over master: its breaker no longer counts (a command sent to it would try it)
        } else if (node.startsWith(NO_MASTER)) {
            b.failure(System.nanoTime());
            clients.topology().request();
        } else if (b.startPing(System.nanoTime(), trials.quietNanos())) {
            BreakerTrials.ping(conn, node, settings.timeout()).whenComplete((pong, err) -> {
                boolean answered = err == null || RemoteFailure.isErrorReply(err);
                if (answered) {
                    answered(b);
                } else if (!closed) {
                    failed(b, node, () -> RemoteNodes.whereNode(conn, settings.urls().get(0), node), err);
                }
                b.pingDone(); // after the outcome: a half-open breaker refuses operations until then
                if (!answered && !closed && b.state(System.nanoTime()) == CircuitBreaker.State.CLOSED) {
                    trial(node, b); // a quiet node failed once: the next PING at once, until it answers or its breaker opens
                }
            });
        }
    }

    private synchronized void say(CompletableFuture<String> line) {
        lines = lines.handle((v, e) -> null).thenCompose(v -> line).thenAccept(warn);
    }

    /** A node answered: its breaker closes, and once all are closed after an outage one line says so. */
    private void answered(CircuitBreaker b) {
        b.success(System.nanoTime());
        if (saidDown.get() && "closed".equals(breakerState()) && saidDown.compareAndSet(true, false)) {
            say(CompletableFuture.completedFuture("remote tier: " + (settings.cluster() ? "every cluster node"
                    : RemoteSettings.redact(settings.urls().get(0))) + " answers again"));
        }
    }

    @Override
    public boolean allows(String key) {
        if (offReason != null || closed) {
            return false;
        }
        long now = System.nanoTime();
        if (connection == null) {
            if (!connecting && connectBreaker.allows(now)) {
                connect(); // in the background; operations are refused until it succeeds
            }
            return false;
        }
        return breaker(RemoteNodes.of(connection, key)).allows(now);
    }

    private <T> CompletableFuture<T> guarded(String key, java.util.function.Supplier<CompletionStage<T>> op) {
        if (!allows(key)) {
            return CompletableFuture.failedFuture(new RemoteFailure(RemoteFailure.Cause.UNAVAILABLE,
                    offReason != null ? "remote tier off" : connection == null ? "not connected (" + lastConnectError + ")"
                            : "the node's breaker is open"));
        }
        String node = RemoteNodes.of(connection, key);
        CircuitBreaker b = breaker(node);
        CompletableFuture<T> f;
        try {
            f = op.get().toCompletableFuture();
        } catch (RuntimeException e) {
            f = CompletableFuture.failedFuture(e);
        }
        return f.handle((v, err) -> {
            if (err == null) {
                answered(b);
                return v;
            }
            String msg = RemoteErrors.messageOf(err);
            RemoteFailure.Cause cause = RemoteFailure.causeOf(err);
            String off = RemoteErrors.refusal(settings.cluster() ? null : settings.urls().get(0), key, msg);
            if (off != null) {
                turnOff(off); // for good: no breaker counts it
            } else if (RemoteFailure.isErrorReply(err)) {
                // The server answered: no breaker counts a refusal (a full store still serves reads).
                if (msg.contains("OOM ") && saidFull.compareAndSet(false, true)) {
                    warn.accept(RemoteErrors.storeFull(RemoteNodes.where(connection, settings.urls().get(0), key), msg));
                } else if (msg.contains("invalid bulk length")) {
                    valueLimit.read(connection); // proto-max-bulk-len lowered since the start: larger values are not sent from now on
                }
            } else if (!RemoteFailure.isCancelled(err)) { // a SET never sent: no sign of the server's health
                failed(b, node, () -> RemoteNodes.where(connection, settings.urls().get(0), key), err);
            }
            throw new RemoteFailure(cause, RemoteErrors.firstLine(msg));
        });
    }

    /**
     * A failure that tells of the node's health (no answer, no connection): its breaker counts it,
     * and its opening says the outage's line ({@code where}: the node; why: {@link ReconnectReasons}).
     */
    private void failed(CircuitBreaker b, String node, java.util.function.Supplier<String> where, Throwable err) {
        RemoteFailure.Cause cause = RemoteFailure.causeOf(err);
        long opened = b.opens();
        b.failure(System.nanoTime());
        if (b.opens() > opened && saidDown.compareAndSet(false, true)) {
            // Once per outage, not per breaker period: a frozen store would say it every second.
            String w = where.get();
            say(reconnects.reasonOf(RemoteNodes.address(connection, clients.uris().get(0), node), err, settings.timeout().toMillis())
                    .thenApply(reason -> "remote tier: " + w + " stopped answering (" + cause.label() + ": " + reason
                            + "); lookups miss and writes are dropped until it answers (tried again every "
                            + settings.breakerOpen().toMillis() + " ms)"));
        }
        if (clients.topology() != null && cause != RemoteFailure.Cause.ERROR) {
            clients.topology().request(); // a dead or frozen master: its replica may serve the slot by now
        }
    }

    /** The async commands of {@link #strings} (standalone or cluster: both dispatch any command, routed by its key). */
    @SuppressWarnings("unchecked")
    private BaseRedisAsyncCommands<String, byte[]> dispatcher() {
        return (BaseRedisAsyncCommands<String, byte[]>) strings;
    }

    @Override
    public CompletableFuture<byte[]> get(String key) {
        return guarded(key, () -> strings.get(key));
    }

    /**
     * GET whose reply goes to {@code sink} from Lettuce's receive buffer on the I/O thread (no
     * array per value); {@code dispatch} routes it by its key on a cluster like {@code get}.
     */
    @Override
    public <T> CompletableFuture<T> read(String key, Function<ByteBuffer, T> sink) {
        return guarded(key, () -> {
            CommandArgs<String, byte[]> args = new CommandArgs<>(CODEC).addKey(key);
            return dispatcher().dispatch(CommandType.GET, new SinkOutput<>(CODEC, sink), args);
        });
    }

    @Override
    public CompletableFuture<Void> set(String key, byte[] value) {
        if (value.length > valueLimit.bytes()) {
            return valueLimit.tooLarge(value.length);
        }
        return guarded(key, () -> (setArgs == null ? strings.set(key, value) : strings.set(key, value, setArgs))
                .thenApply(ok -> null));
    }

    /**
     * Standalone: the SETs go out together, each through the node's breaker as a single
     * {@link #set}'s does: Lettuce encodes them as one batch into one buffer and flushes once (see
     * {@code SetBatch.BYTES} of the write path; large values on plain TCP go through {@link #setFrom}).
     * Each keeps a deadline of the settings' timeout. A cluster sends each command on its own,
     * routed by its key.
     */
    @Override
    public List<CompletableFuture<Void>> setAll(List<String> keys, List<byte[]> values) {
        if (keys.size() != values.size()) {
            throw new IllegalArgumentException(keys.size() + " keys, " + values.size() + " values");
        }
        StatefulConnection<String, byte[]> c = connection;
        if (settings.cluster() || c == null) {
            return RemoteStore.super.setAll(keys, values);
        }
        return LettuceSetBatch.send(c, CODEC, setArgs, valueLimit, keys, values, this::guarded);
    }

    /** Plain TCP, standalone: {@link #DIRECT_SET_MIN_BYTES} up to the limit, by {@link RespSetConnection} (no copy). */
    @Override
    public boolean setsFromMemory(long bytes) {
        return clients.directSets() != null && bytes >= DIRECT_SET_MIN_BYTES && bytes <= valueLimit.bytes();
    }

    @Override
    public CompletableFuture<Void> setFrom(String key, MemorySegment header, MemorySegment payload, MemoryClaim claim) {
        long n = header.byteSize() + payload.byteSize();
        if (!setsFromMemory(n)) {
            throw new UnsupportedOperationException("a value of " + n + " bytes is not set from memory here: setAll");
        }
        return guarded(key, () -> {
            CompletableFuture<Void> answer = new CompletableFuture<>();
            clients.directSets().set(key, new ByteBuffer[] {header.asByteBuffer(), payload.asByteBuffer()}, claim, answer);
            // A server whose proto-max-bulk-len was lowered below the value may close the socket
            // before its error reply is read (that reply, when read, is guarded's case): a large
            // SET's lost connection reads the limit again.
            return answer.whenComplete((v, e) -> {
                if (e != null && RemoteFailure.causeOf(e) == RemoteFailure.Cause.UNAVAILABLE) {
                    valueLimit.read(connection);
                }
            });
        });
    }

    /** TLS of a client of {@code settings}' store: trusting its CA file when given, else the JVM's CAs. */
    public static SslOptions sslOptions(RemoteSettings settings) {
        return settings.caFile() == null ? SslOptions.create()
                : SslOptions.builder().jdkSslProvider().trustManager(settings.caFile().toFile()).build();
    }

    @Override
    public CompletableFuture<Boolean> touch(String key) {
        return guarded(key, () -> keys.touch(key).thenApply(n -> n != null && n > 0));
    }

    @Override
    public void delete(String key) {
        guarded(key, () -> keys.del(key)).exceptionally(e -> null);
    }

    @Override
    public long maxValueBytes() {
        return valueLimit.bytes();
    }

    /**
     * {@inheritDoc} Not connected yet is {@code open} even while a connection attempt is out:
     * every operation is refused until one succeeds.
     */
    @Override
    public String breakerState() {
        if (offReason != null) {
            return "off";
        }
        StatefulConnection<String, byte[]> conn = connection;
        if (conn == null) {
            return "open";
        }
        if (!(conn instanceof StatefulRedisClusterConnection<String, byte[]> c)) {
            return CircuitBreaker.stateOf(breakers.values(), System.nanoTime());
        }
        return CircuitBreaker.stateOf(CircuitBreaker.current(breakers, TopologyRefresh.servesNow(c.getPartitions(), NO_MASTER)), System.nanoTime());
    }

    /**
     * Times a node's breaker opened, plus one when the store could not be reached at start (its
     * first connection refused, failed, or not answered when {@link #open} returned): so state
     * {@code open} always comes with at least one opening. A tier turned off opens nothing.
     */
    @Override
    public long breakerOpens() {
        return breakers.values().stream().mapToLong(CircuitBreaker::opens).sum() + connectBreaker.opens();
    }

    @Override
    public String offReason() {
        return offReason;
    }

    /**
     * One more owner of this store (the KV groups of one engine share one store, each group's
     * remote tier closing it): the store closes at the last owner's {@link #close}.
     */
    public LettuceRemoteStore retain() {
        if (owners.getAndIncrement() <= 0) {
            owners.decrementAndGet();
            throw new IllegalStateException("the store is closed");
        }
        return this;
    }

    /** Closes the store once every owner ({@link #retain}) has closed it; later calls do nothing. */
    @Override
    public void close() {
        if (owners.decrementAndGet() != 0) {
            return; // another owner still uses it, or it closed already
        }
        closed = true;
        reconnects.close();
        // Bounded: the client's connections close without waiting on the server, then its threads end.
        clients.close(resources);
    }

    @Override
    public String toString() {
        return "LettuceRemoteStore[" + settings + "]";
    }
}

package io.kvtier.telemetry;

import io.kvtier.tier.KvEvent;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZFrame;
import org.zeromq.ZMQ;
import org.zeromq.ZMsg;

/**
 * Publishes KV event batches the way vLLM's {@code ZmqEventPublisher} does, so KV-aware routers
 * (llm-d, Dynamo) can subscribe:
 *
 * <ul>
 *   <li>a PUB socket sends each batch as three frames {@code [topic, sequence, payload]}: the topic
 *       in UTF-8, the sequence number as 8 bytes big-endian (0 for the first batch, then one more
 *       per batch: a gap tells a subscriber it missed batches), the payload as
 *       {@link KvEventEncoder} makes it;</li>
 *   <li>an optional ROUTER socket answers replay requests {@code [identity, "", start (8 bytes
 *       big-endian)]} with every buffered batch whose sequence is at least {@code start}, each as
 *       {@code [identity, "", topic, sequence, payload]}, then the end marker
 *       {@code [identity, "", "", -1 (8 bytes), ""]}. The buffer keeps the last
 *       {@code bufferBatches} batches (older ones cannot be replayed).</li>
 * </ul>
 *
 * Both sockets are bound (kvtier never connects them); bind to loopback unless routers run
 * elsewhere. One thread owns both sockets; {@link #publish} only queues the batch, so the engine
 * thread never waits on the network (it waits only if {@code queueBatches} batches are queued,
 * which bounds memory rather than dropping a batch and leaving a silent hole in a router's view).
 * A batch is never dropped between the caller and the PUB socket: its sequence number is given
 * when it is sent, and it enters the replay buffer whether or not a subscriber received it.
 *
 * <p>A new subscriber misses what the PUB socket sends before its subscription arrives (ZMQ's
 * slow joiner: the subscription travels after the TCP connect and the ZMTP handshake, and the PUB
 * applies it at its next send); no socket event tells when that is. A router therefore takes the
 * first batch it receives as its start and asks the replay socket for the sequence numbers before
 * it.
 */
public final class KvEventPublisher implements AutoCloseable {

    /**
     * @param endpoint       PUB address, e.g. {@code tcp://127.0.0.1:5557}
     * @param replayEndpoint ROUTER address for replays, or null for none
     * @param topic          the first frame of every batch
     * @param bufferBatches  batches kept for replay
     * @param queueBatches   batches queued for the publishing thread at most
     */
    public record Config(String endpoint, String replayEndpoint, String topic, int bufferBatches, int queueBatches) {
        public Config {
            Objects.requireNonNull(endpoint, "endpoint");
            Objects.requireNonNull(topic, "topic");
            if (bufferBatches < 1 || queueBatches < 1) {
                throw new IllegalArgumentException("buffer and queue sizes must be positive");
            }
        }

        /** vLLM's defaults: 10,000 batches of replay buffer, 100,000 queued. */
        public Config(String endpoint, String replayEndpoint, String topic) {
            this(endpoint, replayEndpoint, topic, 10_000, 100_000);
        }
    }

    /** The end-of-replay marker's sequence frame: -1 as 8 bytes. */
    static final byte[] END_SEQ = ByteBuffer.allocate(8).putLong(-1).array();

    private record Batch(double epochSeconds, List<KvEvent> events) {
    }

    private record Sent(long seq, byte[] payload) {
    }

    private static final Batch STOP = new Batch(0, List.of());

    private final Config config;
    private final BatchEncoder encoder;
    private final byte[] topic;
    private final ZContext context = ZmqErrors.context();
    private final ZMQ.Socket pub;
    private final ZMQ.Socket replay;
    private final BlockingQueue<Batch> queue;
    private final ArrayDeque<Sent> buffer = new ArrayDeque<>();
    private final Thread thread;
    private volatile long published;
    private volatile boolean closed;
    /** Why the publishing thread ended early (a bug), or null. */
    private volatile Throwable failure;

    /**
     * Binds the sockets and starts the publishing thread.
     *
     * @throws IllegalArgumentException if an endpoint cannot be bound (says which and why)
     */
    public KvEventPublisher(Config config, KvEventEncoder encoder) {
        this(config, Objects.requireNonNull(encoder, "encoder")::encode);
    }

    /** What the publishing thread calls to turn a batch into its payload (tests inject faults here). */
    @FunctionalInterface
    interface BatchEncoder {
        byte[] encode(double epochSeconds, List<KvEvent> events);
    }

    KvEventPublisher(Config config, BatchEncoder encoder) {
        this.config = config;
        this.encoder = encoder;
        this.topic = config.topic().getBytes(StandardCharsets.UTF_8);
        this.queue = new ArrayBlockingQueue<>(config.queueBatches());
        try {
            pub = bind(SocketType.PUB, config.endpoint(), "--kv-events-endpoint");
            pub.setSndHWM(100_000);
            replay = config.replayEndpoint() == null ? null
                    : bind(SocketType.ROUTER, config.replayEndpoint(), "--kv-events-replay-endpoint");
        } catch (RuntimeException e) {
            context.close();
            throw e;
        }
        thread = Thread.ofPlatform().name("kv-events").daemon().start(this::run);
    }

    private ZMQ.Socket bind(SocketType type, String endpoint, String what) {
        ZMQ.Socket s = context.createSocket(type);
        s.setLinger(0);
        try {
            s.bind(endpoint);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(what + " " + endpoint + ": cannot bind: " + ZmqErrors.describe(e), e);
        }
        return s;
    }

    /**
     * Queues one batch (engine thread). An empty list sends nothing: vLLM publishes only batches
     * that hold events.
     *
     * @throws IllegalStateException after {@link #close()}, or once the publishing thread has
     *         failed (a bug: its batches would be lost, and a full queue would block the caller
     *         for ever, so the caller is told instead)
     */
    public void publish(List<KvEvent> events) {
        if (closed) {
            throw new IllegalStateException("KV event publisher is closed");
        }
        if (events.isEmpty()) {
            return;
        }
        Batch b = new Batch(System.currentTimeMillis() / 1000.0, List.copyOf(events));
        try {
            do {
                checkAlive();
            } while (!queue.offer(b, 100, TimeUnit.MILLISECONDS));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while queueing KV events", e);
        }
    }

    private void checkAlive() {
        Throwable t = failure;
        if (t != null) {
            throw new IllegalStateException("the KV event publisher failed: " + t, t);
        }
    }

    /** The PUB socket's address as bound (a {@code *} port resolved), e.g. {@code tcp://127.0.0.1:5557}. */
    public String endpoint() {
        return pub.getLastEndpoint();
    }

    /** The replay socket's address as bound, or null without one. */
    public String replayEndpoint() {
        return replay == null ? null : replay.getLastEndpoint();
    }

    /** Batches sent so far (the next batch's sequence number). */
    public long published() {
        return published;
    }

    private void run() {
        long seq = 0;
        try {
            while (true) {
                serveReplays();
                Batch b = queue.poll(5, TimeUnit.MILLISECONDS);
                if (b == STOP) {
                    return;
                }
                if (b == null) {
                    continue;
                }
                byte[] payload = encoder.encode(b.epochSeconds(), b.events());
                pub.sendMore(topic);
                pub.sendMore(ByteBuffer.allocate(8).putLong(seq).array());
                pub.send(payload);
                buffer.addLast(new Sent(seq, payload));
                if (buffer.size() > config.bufferBatches()) {
                    buffer.removeFirst();
                }
                published = ++seq;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Throwable t) {
            failure = t;
            System.err.println("kvtier: the KV event publisher failed (a bug): " + t);
            t.printStackTrace(System.err);
        } finally {
            context.close();
        }
    }

    private void serveReplays() {
        if (replay == null) {
            return;
        }
        ZMsg request;
        while ((request = ZMsg.recvMsg(replay, ZMQ.DONTWAIT)) != null) {
            ZFrame[] frames = request.toArray(new ZFrame[0]);
            if (frames.length != 3 || frames[2].size() != 8) {
                request.destroy(); // not [identity, "", 8-byte start]: vLLM ignores such requests too
                continue;
            }
            byte[] identity = frames[0].getData();
            long start = ByteBuffer.wrap(frames[2].getData()).getLong();
            for (Sent s : buffer) {
                if (Long.compareUnsigned(s.seq(), start) >= 0) {
                    replay.sendMore(identity);
                    replay.sendMore(new byte[0]);
                    replay.sendMore(topic);
                    replay.sendMore(ByteBuffer.allocate(8).putLong(s.seq()).array());
                    replay.send(s.payload());
                }
            }
            replay.sendMore(identity);
            replay.sendMore(new byte[0]);
            replay.sendMore(new byte[0]);
            replay.sendMore(END_SEQ);
            replay.send(new byte[0]);
            request.destroy();
        }
    }

    /** Sends what is queued, stops the thread and closes the sockets. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            while (thread.isAlive() && !queue.offer(STOP, 100, TimeUnit.MILLISECONDS)) {
                // a full queue drains while the thread lives; a failed thread takes nothing more
            }
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

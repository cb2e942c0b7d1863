package io.kvtier.tier.remote;

import io.lettuce.core.RedisCommandExecutionException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;

/**
 * SETs written straight to a standalone server's socket, pipelined: each command's RESP head, its
 * value and the closing CRLF go to the kernel in one gathering write from the calling thread, and
 * a reader thread takes the replies in order and completes each SET's future. Lettuce copies every
 * value into its own buffer on its event-loop thread before the socket write; at 256 KiB that copy
 * and the hand-off between the two threads held the tier's stores to 0.2-0.35 of redis-benchmark's
 * SET ({@code bench offload --remote-url}), while a plain pipelined socket write reached it
 * (docs/design-notes.md). Plain TCP only: a TLS or cluster store keeps Lettuce's SETs.
 *
 * <p>The connection opens at first use and again after a failure (AUTH and SELECT pipelined ahead
 * of the first SETs; an error reply to either fails the connection with that reply, so a wrong
 * password reaches the caller as the server's {@code WRONGPASS}). An I/O error, the end of the
 * stream, a write or a reply not done within the timeout closes it and fails every SET not answered
 * yet: {@link IOException} (a lost connection) or {@link TimeoutException} (a frozen server), the
 * kinds {@link RemoteFailure#causeOf} counts as unavailable and timeout. An error reply fails its
 * SET alone ({@link RedisCommandExecutionException}, as Lettuce reports it). Thread-safe: writers
 * take turns, so the order of the replies is the order of the queued answers.
 */
final class RespSetConnection implements AutoCloseable {

    /** Fires the write and reply deadlines of every connection; one daemon thread. */
    private static final ScheduledExecutorService DEADLINES = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "kvtier-remote-set-deadlines");
        t.setDaemon(true);
        return t;
    });
    private static final byte[] CRLF = {'\r', '\n'};

    private final InetSocketAddress address;
    private final List<byte[]> handshake;
    private final byte[] ttlArgs;
    private final long timeoutNanos;
    private final ReentrantLock writing = new ReentrantLock();
    private Link link; // guarded by writing
    private volatile boolean closed;

    /**
     * @param user     the ACL user for AUTH, or null for the default user ({@code AUTH password}, which servers before ACLs understand too)
     * @param password null: no AUTH
     * @param database the database to SELECT (0: none sent)
     * @param ttl      zero: no expiry; else each SET gets {@code PX} of it in ms
     * @param timeout  deadline of a connection attempt, of one write and of a batch's replies
     */
    RespSetConnection(String host, int port, String user, String password, int database, Duration ttl, Duration timeout) {
        this.address = InetSocketAddress.createUnresolved(host, port);
        this.handshake = new ArrayList<>();
        if (password != null) {
            handshake.add(user == null ? command("AUTH", password) : command("AUTH", user, password));
        }
        if (database != 0) {
            handshake.add(command("SELECT", Integer.toString(database)));
        }
        this.ttlArgs = ttl.isZero() ? null : ("$2\r\nPX\r\n" + bulkLength(Long.toString(ttl.toMillis()))
                + ttl.toMillis() + "\r\n").getBytes(StandardCharsets.US_ASCII);
        this.timeoutNanos = timeout.toNanos();
    }

    /**
     * Sends {@code SET keys[i] values[i]} for every i, in order, and completes {@code answers[i]}
     * with its reply (null for OK), or exceptionally as the class comment says. Returns once every
     * command is written (or the connection failed); the replies arrive later.
     *
     * @throws IllegalArgumentException if the three lists differ in size
     */
    void setAll(List<String> keys, List<byte[]> values, List<CompletableFuture<Void>> answers) {
        if (keys.size() != values.size() || keys.size() != answers.size()) {
            throw new IllegalArgumentException(keys.size() + " keys, " + values.size() + " values, " + answers.size() + " answers");
        }
        if (keys.isEmpty()) {
            return;
        }
        writing.lock();
        try {
            if (closed) {
                IOException e = new IOException("the store is closed");
                answers.forEach(a -> a.completeExceptionally(e));
                return;
            }
            Link l = link;
            if (l == null || l.failed()) {
                try {
                    l = link = open();
                } catch (IOException e) {
                    answers.forEach(a -> a.completeExceptionally(e));
                    return;
                }
            }
            for (int i = 0; i < keys.size(); i++) {
                l.pending.add(answers.get(i)); // queued before it is written: its reply finds it
                if (!l.write(head(keys.get(i), values.get(i).length), ByteBuffer.wrap(values.get(i)), tail())) {
                    Throwable why = l.failure.get();
                    answers.subList(i + 1, answers.size()).forEach(a -> a.completeExceptionally(why));
                    return;
                }
            }
            l.replyDeadline(answers.getLast());
        } finally {
            writing.unlock();
        }
    }

    private Link open() throws IOException {
        InetSocketAddress resolved = new InetSocketAddress(address.getHostString(), address.getPort());
        if (resolved.isUnresolved()) {
            throw new IOException("cannot resolve " + address.getHostString());
        }
        SocketChannel ch = SocketChannel.open();
        try {
            ch.socket().setTcpNoDelay(true);
            ch.socket().connect(resolved, (int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(timeoutNanos)));
        } catch (IOException e) {
            ch.close();
            throw e;
        }
        Link l = new Link(ch);
        l.reader.start();
        for (byte[] c : handshake) {
            CompletableFuture<Void> answer = new CompletableFuture<>();
            answer.whenComplete((v, err) -> {
                if (err != null) {
                    l.fail(err); // every SET behind it fails with the server's refusal
                }
            });
            l.pending.add(answer);
            if (!l.write(ByteBuffer.wrap(c))) {
                break;
            }
        }
        return l;
    }

    /** The RESP head of {@code SET key <value of n bytes>}, up to the value's own length line. */
    private ByteBuffer head(String key, int n) {
        byte[] k = key.getBytes(StandardCharsets.UTF_8);
        String start = (ttlArgs == null ? "*3" : "*5") + "\r\n$3\r\nSET\r\n$" + k.length + "\r\n";
        String valueLength = "\r\n$" + n + "\r\n";
        ByteBuffer b = ByteBuffer.allocate(start.length() + k.length + valueLength.length());
        b.put(start.getBytes(StandardCharsets.US_ASCII)).put(k).put(valueLength.getBytes(StandardCharsets.US_ASCII)).flip();
        return b;
    }

    /** A whole RESP command of bulk strings. */
    private static byte[] command(String... args) {
        StringBuilder s = new StringBuilder("*").append(args.length).append("\r\n");
        for (String a : args) {
            s.append(bulkLength(a)).append(a).append("\r\n");
        }
        return s.toString().getBytes(StandardCharsets.UTF_8);
    }

    private static String bulkLength(String a) {
        return "$" + a.getBytes(StandardCharsets.UTF_8).length + "\r\n";
    }

    /** The TTL's two arguments go after the value: SET key value PX ms. */
    private ByteBuffer tail() {
        return ttlArgs == null ? ByteBuffer.wrap(CRLF) : ByteBuffer.allocate(2 + ttlArgs.length).put(CRLF).put(ttlArgs).flip();
    }

    @Override
    public void close() {
        closed = true;
        writing.lock();
        try {
            if (link != null) {
                link.fail(new IOException("the store is closed"));
            }
        } finally {
            writing.unlock();
        }
    }

    /** One TCP connection, the answers it owes in order, and the thread reading its replies. */
    private final class Link {
        final SocketChannel ch;
        final ConcurrentLinkedQueue<CompletableFuture<Void>> pending = new ConcurrentLinkedQueue<>();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final Thread reader;

        Link(SocketChannel ch) {
            this.ch = ch;
            this.reader = new Thread(this::read, "kvtier-remote-set-replies");
            reader.setDaemon(true);
        }

        boolean failed() {
            return failure.get() != null;
        }

        /** Writes the buffers whole before the timeout; false (and the link failed) if not. */
        boolean write(ByteBuffer... parts) {
            long left = 0;
            for (ByteBuffer p : parts) {
                left += p.remaining();
            }
            ScheduledFuture<?> deadline = DEADLINES.schedule(() -> fail(new TimeoutException(
                    "a SET was not written within " + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms")), timeoutNanos, TimeUnit.NANOSECONDS);
            try {
                while (left > 0) {
                    left -= ch.write(parts);
                }
                return true;
            } catch (IOException e) {
                fail(e); // a timeout closed the channel first: its failure stands
                return false;
            } finally {
                deadline.cancel(false);
            }
        }

        /** Fails the link unless {@code last} is answered within the timeout. */
        void replyDeadline(CompletableFuture<Void> last) {
            if (last.isDone()) {
                return;
            }
            ScheduledFuture<?> deadline = DEADLINES.schedule(() -> fail(new TimeoutException(
                    "no reply to a SET within " + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms")), timeoutNanos, TimeUnit.NANOSECONDS);
            last.whenComplete((v, err) -> deadline.cancel(false));
        }

        /** Closes the connection and fails every answer it still owes with the first failure. */
        void fail(Throwable why) {
            failure.compareAndSet(null, why);
            try {
                ch.close();
            } catch (IOException ignored) {
                // closing is all that is left to do
            }
            for (CompletableFuture<Void> a; (a = pending.poll()) != null; ) {
                a.completeExceptionally(failure.get());
            }
        }

        /** The reader thread: simple-string and error replies, one per queued answer. */
        private void read() {
            ByteBuffer in = ByteBuffer.allocate(16 << 10);
            try {
                while (true) {
                    if (ch.read(in) < 0) {
                        throw new IOException("the server closed the connection");
                    }
                    in.flip();
                    for (String line; (line = line(in)) != null; ) {
                        CompletableFuture<Void> a = pending.poll();
                        if (a == null) {
                            throw new IOException("a reply no command asked for: " + line);
                        }
                        switch (line.isEmpty() ? ' ' : line.charAt(0)) {
                            case '+' -> a.complete(null);
                            case '-' -> a.completeExceptionally(new RedisCommandExecutionException(line.substring(1)));
                            default -> {
                                a.completeExceptionally(new IOException("unexpected reply to SET: " + line));
                                throw new IOException("unexpected reply to SET: " + line);
                            }
                        }
                    }
                    in.compact();
                    if (!in.hasRemaining()) {
                        throw new IOException("a reply line longer than " + in.capacity() + " bytes");
                    }
                }
            } catch (IOException e) {
                fail(e);
            }
        }

        /** The next whole line of {@code in} without its CRLF, or null (the rest stays in {@code in}). */
        private static String line(ByteBuffer in) {
            for (int i = in.position(); i + 1 < in.limit(); i++) {
                if (in.get(i) == '\r' && in.get(i + 1) == '\n') {
                    byte[] b = new byte[i - in.position()];
                    in.get(b);
                    in.position(i + 2);
                    return new String(b, StandardCharsets.UTF_8);
                }
            }
            return null;
        }
    }
}

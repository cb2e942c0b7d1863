package io.kvtier.tier.remote;

import io.lettuce.core.RedisCommandExecutionException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
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
 * value and the closing CRLF go to the kernel in gathering, non-blocking writes from the calling
 * thread, straight from the value's own memory (a host slot, under its job's claim: no copy in the
 * process), and a reader thread takes the replies in order and completes each SET's future.
 * Lettuce copies every value into its own buffer on its event-loop thread before the socket write;
 * at 256 KiB that copy and the hand-off between the two threads held the tier's stores to 0.2-0.35
 * of redis-benchmark's SET ({@code bench offload --remote-url}), and a copy of the slot on the
 * caller's thread to about 0.35, while a plain pipelined socket write reached it
 * (docs/design-notes.md). Plain TCP only: a TLS or cluster store keeps Lettuce's SETs.
 *
 * <p>The connection opens at first use and again after a failure (AUTH and SELECT pipelined ahead
 * of the first SETs; an error reply to either fails the connection with that reply, so a wrong
 * password reaches the caller as the server's {@code WRONGPASS}). An I/O error, the end of the
 * stream, a write or a reply not done within the timeout closes it and fails every SET not answered
 * yet: {@link IOException} (a lost connection) or {@link TimeoutException} (a frozen server), the
 * kinds {@link RemoteFailure#causeOf} counts as unavailable and timeout. An error reply fails its
 * SET alone ({@link RedisCommandExecutionException}, as Lettuce reports it); a claim taken back
 * mid-value (the socket did not take the value before its job's deadline) closes the connection
 * too, failing what it owed with a {@link TimeoutException}; one refused before the first byte
 * fails that SET alone with a {@link CancellationException} (the caller's own doing).
 * Thread-safe: writers take turns, so the order of the replies is the order of the queued answers.
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
     * Sends {@code SET key <the bytes of value's buffers, in order>} and completes {@code answer}
     * with its reply, or exceptionally as the class comment says. The buffers are handed to the
     * kernel straight from their memory (a direct buffer: no copy on the heap), each kernel copy
     * under {@code claim}, never held while the socket is full. If the claim is refused before the
     * first byte, the SET is not sent ({@code answer} fails with a {@link CancellationException});
     * after it, the connection is closed, so the server never completes the partial SET, and every
     * SET it still owed fails with a {@link TimeoutException} (the next SET connects again). Returns once
     * the command is written, or false if it was not (the answer has failed).
     */
    boolean set(String key, ByteBuffer[] value, MemoryClaim claim, CompletableFuture<Void> answer) {
        long n = 0;
        for (ByteBuffer b : value) {
            n += b.remaining();
        }
        ByteBuffer[] parts = new ByteBuffer[value.length + 2];
        parts[0] = head(key, n);
        System.arraycopy(value, 0, parts, 1, value.length);
        parts[parts.length - 1] = tail();
        writing.lock();
        try {
            Link l = connected(answer);
            if (l == null) {
                return false;
            }
            l.pending.add(answer); // queued before it is written: its reply finds it
            switch (l.write(claim, parts)) {
                case WRITTEN -> {
                    l.replyDeadline(answer);
                    return true;
                }
                case NOT_STARTED -> {
                    l.pending.remove(answer); // nothing of it was sent: no reply will come
                    answer.completeExceptionally(new CancellationException("the SET's memory was taken back before it was sent"));
                    return false;
                }
                default -> {
                    return false; // the link failed, and the answer with it
                }
            }
        } finally {
            writing.unlock();
        }
    }

    /** The open link, connecting first if there is none; null (and {@code answer} failed) if it cannot. */
    private Link connected(CompletableFuture<Void> answer) {
        if (closed) {
            answer.completeExceptionally(new IOException("the store is closed"));
            return null;
        }
        if (link == null || link.failed()) {
            if (link != null) {
                link.release();
            }
            try {
                link = open();
            } catch (IOException e) {
                link = null;
                answer.completeExceptionally(e);
                return null;
            }
        }
        return link;
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
        Link l;
        try {
            ch.configureBlocking(false); // writes never block: a claim is held for one kernel copy only
            l = new Link(ch);
        } catch (IOException e) {
            ch.close();
            throw e;
        }
        l.reader.start();
        for (byte[] c : handshake) {
            CompletableFuture<Void> answer = new CompletableFuture<>();
            answer.whenComplete((v, err) -> {
                // A server without a password refuses AUTH but serves the SETs behind it, as Lettuce's connection (the
                // store refuses such a password when it connects: LettuceClients.refuseUnwantedPassword).
                if (err != null && !RemoteErrors.isUnwantedPassword(String.valueOf(err.getMessage()))) {
                    l.fail(err); // every SET behind it fails with the server's refusal
                }
            });
            l.pending.add(answer);
            if (l.write(MemoryClaim.OWNED, ByteBuffer.wrap(c)) != Written.WRITTEN) {
                break;
            }
        }
        return l;
    }

    /** The RESP head of {@code SET key <value of n bytes>}, up to the value's own length line. */
    private ByteBuffer head(String key, long n) {
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
                link.release();
            }
        } finally {
            writing.unlock();
        }
    }

    /** How a command's write ended. */
    private enum Written {
        /** Every byte is with the kernel. */
        WRITTEN,
        /** The claim was refused before the first byte: nothing was sent, the connection is fine. */
        NOT_STARTED,
        /** The connection failed (and every answer it owed with it). */
        FAILED
    }

    /**
     * One TCP connection in non-blocking mode, the answers it owes in order, and the thread reading
     * its replies. Each side waits on a selector of its own, so a writer never holds a claim while
     * the socket is full.
     */
    private final class Link {
        final SocketChannel ch;
        final ConcurrentLinkedQueue<CompletableFuture<Void>> pending = new ConcurrentLinkedQueue<>();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final Selector readable;
        final Selector writable;
        final Thread reader;

        Link(SocketChannel ch) throws IOException {
            this.ch = ch;
            this.readable = Selector.open();
            this.writable = Selector.open();
            ch.register(readable, SelectionKey.OP_READ);
            ch.register(writable, SelectionKey.OP_WRITE);
            this.reader = new Thread(this::read, "kvtier-remote-set-replies");
            reader.setDaemon(true);
        }

        boolean failed() {
            return failure.get() != null;
        }

        /**
         * Writes the buffers whole before the timeout, each kernel copy under {@code claim}; a
         * claim refused after the first byte, a write not done by the timeout or an I/O error
         * fails the link.
         */
        Written write(MemoryClaim claim, ByteBuffer... parts) {
            long left = 0;
            for (ByteBuffer p : parts) {
                left += p.remaining();
            }
            long deadline = System.nanoTime() + timeoutNanos;
            boolean started = false;
            try {
                while (left > 0) {
                    if (failed()) {
                        return failWith(failure.get()); // e.g. a reply deadline: the answers queued since fail too
                    }
                    if (!claim.enter()) {
                        // Cut mid-value: the socket did not take the value before its job's deadline, a slow store.
                        return started ? failWith(new TimeoutException("a SET's memory was taken back while it was"
                                + " being written (its job's deadline): the connection is closed, so the server never"
                                + " completes that SET")) : Written.NOT_STARTED;
                    }
                    long n;
                    try {
                        n = ch.write(parts);
                    } finally {
                        claim.exit();
                    }
                    left -= n;
                    started |= n > 0;
                    if (left > 0 && n == 0) {
                        long wait = deadline - System.nanoTime();
                        if (wait <= 0) {
                            return failWith(new TimeoutException("a SET was not written within "
                                    + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms"));
                        }
                        writable.select(Math.max(1, TimeUnit.NANOSECONDS.toMillis(wait))); // the socket is full
                        writable.selectedKeys().clear();
                    }
                }
                return Written.WRITTEN;
            } catch (IOException | ClosedSelectorException e) {
                return failWith(e); // a reply deadline closed the channel first: its failure stands
            }
        }

        private Written failWith(Throwable why) {
            fail(why);
            return Written.FAILED;
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
            readable.wakeup();
            writable.wakeup();
            for (CompletableFuture<Void> a; (a = pending.poll()) != null; ) {
                a.completeExceptionally(failure.get());
            }
        }

        /** Closes the writers' selector: the link is failed and replaced, or the store closed. */
        void release() {
            try {
                writable.close();
            } catch (IOException ignored) {
                // nothing is waiting on it: the writing lock is held
            }
        }

        /** The reader thread: simple-string and error replies, one per queued answer. */
        private void read() {
            ByteBuffer in = ByteBuffer.allocate(16 << 10);
            try (Selector r = readable) {
                while (!failed()) {
                    int n = ch.read(in);
                    if (n < 0) {
                        throw new IOException("the server closed the connection");
                    }
                    if (n == 0) {
                        r.select(); // woken by a reply or by fail()
                        r.selectedKeys().clear();
                        continue;
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
            } catch (IOException | ClosedSelectorException e) {
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

package io.kvtier.tier.remote;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.DelayQueue;
import java.util.concurrent.Delayed;
import java.util.concurrent.TimeUnit;

/**
 * A fake slow network in front of a real server, for tests: a TCP proxy on a free loopback port
 * that forwards every byte, in order and unchanged, {@code delayMillis} after it arrived, in each
 * direction. A store behind it answers correctly but late (its latency stays high) without being
 * frozen. Closing it closes every connection.
 */
public final class FakeSlowProxy implements AutoCloseable {

    private final ServerSocket listener;
    private final int targetPort;
    private final long delayNanos;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    public FakeSlowProxy(int targetPort, long delayMillis) throws IOException {
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        this.targetPort = targetPort;
        this.delayNanos = TimeUnit.MILLISECONDS.toNanos(delayMillis);
        Thread.ofPlatform().daemon().name("slow-proxy-accept").start(this::accept);
    }

    /** The proxy's URL ({@code redis://127.0.0.1:PORT}). */
    public String url() {
        return "redis://127.0.0.1:" + listener.getLocalPort();
    }

    private void accept() {
        while (!closed) {
            try {
                Socket client = listener.accept();
                Socket server = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                client.setTcpNoDelay(true);
                server.setTcpNoDelay(true);
                sockets.add(client);
                sockets.add(server);
                pipe(client, server);
                pipe(server, client);
            } catch (IOException e) {
                if (!closed) {
                    continue; // the target refused this one: the client sees its connection closed
                }
                return;
            }
        }
    }

    /** A run of bytes and when it may go; {@code seq} keeps pieces with the same due time in order. */
    private record Piece(byte[] bytes, long due, long seq) implements Delayed {
        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(due - System.nanoTime(), TimeUnit.NANOSECONDS);
        }

        @Override
        public int compareTo(Delayed o) {
            Piece p = (Piece) o;
            return due != p.due ? Long.compare(due, p.due) : Long.compare(seq, p.seq);
        }
    }

    /** Forwards {@code from}'s bytes to {@code to}, each piece after the delay (in order: due times only grow). */
    private void pipe(Socket from, Socket to) {
        DelayQueue<Piece> queue = new DelayQueue<>();
        java.util.concurrent.atomic.AtomicLong seq = new java.util.concurrent.atomic.AtomicLong();
        Thread.ofPlatform().daemon().name("slow-proxy-read").start(() -> {
            byte[] buf = new byte[64 << 10];
            try (InputStream in = from.getInputStream()) {
                for (int n; (n = in.read(buf)) > 0; ) {
                    queue.add(new Piece(Arrays.copyOf(buf, n), System.nanoTime() + delayNanos, seq.getAndIncrement()));
                }
            } catch (IOException ignored) {
                // closed: forward the end after what was read
            }
            queue.add(new Piece(new byte[0], System.nanoTime() + delayNanos, seq.getAndIncrement()));
        });
        Thread.ofPlatform().daemon().name("slow-proxy-write").start(() -> {
            try (OutputStream out = to.getOutputStream()) {
                while (true) {
                    Piece p = queue.take();
                    if (p.bytes().length == 0) {
                        break;
                    }
                    out.write(p.bytes());
                    out.flush();
                }
            } catch (IOException | InterruptedException ignored) {
                // the other side is gone
            }
            closeQuietly(to);
            closeQuietly(from);
        });
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // already closed
        }
    }

    @Override
    public void close() throws IOException {
        closed = true;
        listener.close();
        for (Socket s : sockets) {
            closeQuietly(s);
        }
    }
}

package io.kvtier.server;

import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * Tells whether the client of a non-streaming exchange has gone away, while the server has not
 * written anything yet (a streaming exchange learns it from a failed write instead).
 *
 * <p>The JDK's {@code HttpServer} has no public way to see a closed connection before the
 * response: this class reaches the exchange's socket channel through the server's internal
 * classes, which needs {@code --add-opens jdk.httpserver/sun.net.httpserver=ALL-UNNAMED} (the
 * kvtier jar's manifest and the test JVMs have it). Without it {@link #available()} is false and
 * {@link #gone()} always false: such clients are then noticed only when their response is written.
 *
 * <p>A probe is one non-blocking read of the idle connection: -1 (or an error) means the client
 * closed it. A client that sends more bytes before its response (HTTP pipelining, which the JDK
 * server does not support anyway) has a byte consumed; the connection is then closed after the
 * response ({@link #mustClose()}) so that no half-read request is ever parsed. One instance per
 * exchange, used by the exchange's thread only.
 */
final class ClientWatch {

    private static final Field IMPL;
    private static final Method CONNECTION;
    private static final Method CHANNEL;
    /** Why probes are off, or null when they work. */
    static final String UNAVAILABLE;

    static {
        Field impl = null;
        Method connection = null;
        Method channel = null;
        String why = null;
        try {
            Class<?> exchange = Class.forName("sun.net.httpserver.HttpExchangeImpl");
            impl = exchange.getDeclaredField("impl");
            connection = Class.forName("sun.net.httpserver.ExchangeImpl").getDeclaredMethod("getConnection");
            channel = Class.forName("sun.net.httpserver.HttpConnection").getDeclaredMethod("getChannel");
            impl.setAccessible(true);
            connection.setAccessible(true);
            channel.setAccessible(true);
        } catch (ReflectiveOperationException | RuntimeException e) {
            why = "cannot watch the connections of non-streaming requests (" + e
                    + "); run the JVM with --add-opens jdk.httpserver/sun.net.httpserver=ALL-UNNAMED";
        }
        IMPL = impl;
        CONNECTION = connection;
        CHANNEL = channel;
        UNAVAILABLE = why;
    }

    private SocketChannel channel;
    private boolean gone;
    private boolean mustClose;

    ClientWatch(HttpExchange ex) {
        this.channel = channelOf(ex);
    }

    /** True when this exchange's connection can be probed. */
    boolean available() {
        return channel != null;
    }

    /** Probes the connection: true once the client has closed it (stays true). */
    boolean gone() {
        if (gone || channel == null) {
            return gone;
        }
        synchronized (channel.blockingLock()) {
            try {
                channel.configureBlocking(false);
                try {
                    int n = channel.read(ByteBuffer.allocate(1));
                    if (n > 0) {
                        mustClose = true;
                    }
                    gone = n < 0;
                } finally {
                    channel.configureBlocking(true);
                }
            } catch (IOException e) {
                gone = true; // reset by the peer, or closed
            } catch (RuntimeException e) {
                channel = null; // the server changed how it holds the channel: stop probing this exchange
            }
        }
        return gone;
    }

    /** True when a probe consumed a byte of a next request: answer with {@code Connection: close}. */
    boolean mustClose() {
        return mustClose;
    }

    private static SocketChannel channelOf(HttpExchange ex) {
        if (UNAVAILABLE != null || !IMPL.getDeclaringClass().isInstance(ex)) {
            return null;
        }
        try {
            return (SocketChannel) CHANNEL.invoke(CONNECTION.invoke(IMPL.get(ex)));
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }
}

package io.kvtier.server;

import java.time.Duration;

/**
 * HTTP settings of {@link OpenAiServer}.
 *
 * @param host          address to bind (127.0.0.1 by default: loopback only)
 * @param port          TCP port; 0 picks a free one ({@link OpenAiServer#port()})
 * @param apiKey        required Bearer token, or null for none
 * @param maxBodyBytes  largest request body read; a larger one gets 413 without being buffered
 * @param shutdownGrace how long in-flight requests may run on after a stop begins
 * @param testOnlyStreamFaultUser TEST ONLY: a streamed request whose {@code user} field equals this
 *                      fails after its first token chunk with an {@code event: error}; null (the
 *                      only value the CLI uses) disables it
 */
public record ServerConfig(String host, int port, String apiKey, long maxBodyBytes, Duration shutdownGrace,
                           String testOnlyStreamFaultUser) {

    public static final String DEFAULT_HOST = "127.0.0.1";
    public static final int DEFAULT_PORT = 8000;
    public static final long DEFAULT_MAX_BODY_BYTES = 1 << 20;
    /**
     * The largest body the server can read: {@link BodyReader} holds a body in one byte array, and
     * the JVM's arrays stop short of {@link Integer#MAX_VALUE} (ByteArrayOutputStream grows to
     * {@code Integer.MAX_VALUE - 8} at most). A larger limit would accept bodies it fails to read.
     */
    public static final long MAX_BODY_BYTES = Integer.MAX_VALUE - 8;

    public ServerConfig {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port must be in 0..65535, got " + port);
        }
        if (maxBodyBytes < 1 || maxBodyBytes > MAX_BODY_BYTES) {
            throw new IllegalArgumentException("max body bytes must be in 1.." + MAX_BODY_BYTES + ", got " + maxBodyBytes);
        }
        if (apiKey != null && apiKey.isBlank()) {
            throw new IllegalArgumentException("the API key is empty");
        }
    }

    /** Loopback, the given port, no key, 1 MiB bodies, 10 s grace. */
    public static ServerConfig loopback(int port) {
        return new ServerConfig(DEFAULT_HOST, port, null, DEFAULT_MAX_BODY_BYTES, Duration.ofSeconds(10), null);
    }

    public ServerConfig withApiKey(String key) {
        return new ServerConfig(host, port, key, maxBodyBytes, shutdownGrace, testOnlyStreamFaultUser);
    }

    public ServerConfig withMaxBodyBytes(long n) {
        return new ServerConfig(host, port, apiKey, n, shutdownGrace, testOnlyStreamFaultUser);
    }

    /** TEST ONLY: see {@link #testOnlyStreamFaultUser}. */
    public ServerConfig withTestOnlyStreamFaultUser(String user) {
        return new ServerConfig(host, port, apiKey, maxBodyBytes, shutdownGrace, user);
    }
}

package io.kvtier.cli;

import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.net.URI;
import java.time.Duration;

/**
 * Deletes what a bench wrote to a standalone store under a tenant of its own: every key of
 * {@code kvt:v1:TENANT:*} (SCAN, then UNLINK). {@code bench offload}'s remote TTFT figure writes a
 * prompt's chunks under a random tenant per run (73 MB on the 110M shape per repeat) and left them
 * on the server, where a 512 MB store soon evicted for them.
 */
final class BenchKeys {

    private BenchKeys() {
    }

    /**
     * A bench's {@code redis://[user@]host:port} or {@code rediss://} URL as a {@link URI} whose
     * host, port and user info are the server's (the bench hands them to redis-benchmark too).
     */
    static URI endpoint(String url) {
        return URI.create(url.replaceFirst("^rediss?://", "http://"));
    }

    /**
     * Deletes the tenant's keys on the server of {@code url} (TLS for {@code rediss://}, with the
     * JVM's trusted CAs), as the URL's user; returns how many.
     *
     * @param password null: no AUTH
     * @throws io.lettuce.core.RedisException if the server cannot be reached or refuses
     */
    static long deleteTenant(String url, String password, String tenant) {
        URI u = endpoint(url);
        RedisURI.Builder b = RedisURI.builder().withHost(u.getHost()).withPort(u.getPort()).withSsl(url.startsWith("rediss://"))
                .withTimeout(Duration.ofSeconds(10));
        if (password != null) {
            b = u.getUserInfo() == null ? b.withPassword(password.toCharArray()) : b.withAuthentication(u.getUserInfo(), password);
        }
        RedisClient client = RedisClient.create(b.build());
        try (StatefulRedisConnection<String, String> c = client.connect()) {
            RedisCommands<String, String> sync = c.sync();
            ScanArgs match = ScanArgs.Builder.matches("kvt:v1:" + tenant + ":*").limit(1000);
            long deleted = 0;
            ScanCursor cursor = ScanCursor.INITIAL;
            do {
                KeyScanCursor<String> page = sync.scan(cursor, match);
                if (!page.getKeys().isEmpty()) {
                    deleted += sync.unlink(page.getKeys().toArray(String[]::new));
                }
                cursor = page;
            } while (!cursor.isFinished());
            return deleted;
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }
}

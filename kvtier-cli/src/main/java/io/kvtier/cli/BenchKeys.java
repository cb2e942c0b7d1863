package io.kvtier.cli;

import io.kvtier.tier.remote.LettuceRemoteStore;
import io.kvtier.tier.remote.RemoteSettings;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.sync.RedisKeyCommands;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;

/**
 * A bench's own plain client of the store of {@code --remote-url} (standalone or cluster, TLS and
 * its CA file, the URL's user), for what the tier's client does not do: delete what a bench wrote
 * under a tenant of its own, every key of {@code kvt:v1:TENANT:*} (SCAN, then UNLINK; a cluster's
 * every master), and name the master of a key. {@code bench offload}'s remote TTFT figure writes a
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
     * Deletes the tenant's keys on the store of {@code settings}, as the URL's user; returns how many.
     *
     * @throws io.lettuce.core.RedisException if the store cannot be reached or refuses
     */
    static long deleteTenant(RemoteSettings settings, String tenant) {
        return withKeys(settings, keys -> {
            // A cluster's SCAN walks every master in turn; its UNLINK of keys of several slots is split by slot.
            ScanArgs match = ScanArgs.Builder.matches("kvt:v1:" + tenant + ":*").limit(1000);
            long deleted = 0;
            ScanCursor cursor = ScanCursor.INITIAL;
            do {
                KeyScanCursor<String> page = keys.scan(cursor, match);
                if (!page.getKeys().isEmpty()) {
                    deleted += keys.unlink(page.getKeys().toArray(String[]::new));
                }
                cursor = page;
            } while (!cursor.isFinished());
            return deleted;
        });
    }

    /** Deletes {@code key} on the store of {@code settings} (a cluster's: on its master), as the URL's user; 1 if it was there. */
    static long delete(RemoteSettings settings, String key) {
        return withKeys(settings, keys -> keys.unlink(key));
    }

    /**
     * The {@code host:port} of the cluster master that holds {@code key}'s slot, as the cluster
     * names it (the address redis-benchmark must be given: any other master answers MOVED).
     *
     * @throws IllegalStateException if no master serves the slot now
     */
    static URI masterOf(RemoteSettings cluster, String key) {
        RedisClusterClient client = RedisClusterClient.create(cluster.urls().stream().map(u -> uri(cluster, u)).toList());
        try {
            client.setOptions(ClusterClientOptions.builder().sslOptions(LettuceRemoteStore.sslOptions(cluster)).build());
            client.refreshPartitions();
            RedisClusterNode n = client.getPartitions().getMasterBySlot(SlotHash.getSlot(key));
            if (n == null) {
                throw new IllegalStateException("no cluster master serves slot " + SlotHash.getSlot(key) + " of " + key);
            }
            return URI.create("http://" + n.getUri().getHost() + ":" + n.getUri().getPort());
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    /** {@code work} on a connection of its own to the store (a cluster's: routed by key), closed after. */
    private static <T> T withKeys(RemoteSettings s, Function<RedisKeyCommands<String, String>, T> work) {
        AbstractRedisClient client;
        StatefulConnection<String, String> c;
        RedisKeyCommands<String, String> keys;
        if (s.cluster()) {
            RedisClusterClient cc = RedisClusterClient.create(s.urls().stream().map(u -> uri(s, u)).toList());
            cc.setOptions(ClusterClientOptions.builder().sslOptions(LettuceRemoteStore.sslOptions(s)).build());
            client = cc;
            StatefulRedisClusterConnection<String, String> cluster = cc.connect();
            c = cluster;
            keys = cluster.sync();
        } else {
            RedisClient rc = RedisClient.create(uri(s, s.urls().getFirst()));
            rc.setOptions(ClientOptions.builder().sslOptions(LettuceRemoteStore.sslOptions(s)).build());
            client = rc;
            var standalone = rc.connect();
            c = standalone;
            keys = standalone.sync();
        }
        try (c) {
            return work.apply(keys);
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    /** The URL as Lettuce's URI: host, port, TLS and database as written, the password for the URL's user. */
    private static RedisURI uri(RemoteSettings s, String url) {
        URI u = endpoint(url);
        String path = u.getPath() == null ? "" : u.getPath().replaceFirst("^/", "");
        RedisURI.Builder b = RedisURI.builder().withHost(u.getHost()).withPort(u.getPort()).withSsl(url.startsWith("rediss://"))
                .withTimeout(Duration.ofSeconds(10)).withDatabase(path.isEmpty() ? 0 : Integer.parseInt(path));
        if (s.password() != null) {
            b = u.getUserInfo() == null ? b.withPassword(s.password().toCharArray()) : b.withAuthentication(u.getUserInfo(), s.password());
        }
        return b.build();
    }
}

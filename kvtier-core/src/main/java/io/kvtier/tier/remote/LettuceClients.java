package io.kvtier.tier.remote;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.SslOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.resource.ClientResources;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The clients a {@link LettuceRemoteStore} talks through, built from its settings: the servers'
 * URIs (connect deadline, credentials), and either a standalone {@link RedisClient} that refuses
 * commands while disconnected (not queued, so a dead server costs a failure at once) or a
 * {@link RedisClusterClient} with its topology refreshes, each with the settings' command timeout
 * and TLS; for a plain-TCP standalone store also the connection that writes large SETs itself.
 *
 * @param uris                    the settings' servers, in their order
 * @param client                  the standalone client; null for a cluster
 * @param clusterClient           the cluster client; null when standalone
 * @param connectedClusterOptions the cluster client's options once connected (refreshes ask every
 *                                known node); null when standalone
 * @param topology                the refreshes the store asks for; null when standalone
 * @param directSets              large SETs straight from memory to a socket of their own (plain
 *                                TCP, standalone, {@link LettuceRemoteStore#DIRECT_SETS}); else null
 */
record LettuceClients(List<RedisURI> uris, RedisClient client, RedisClusterClient clusterClient,
                      ClusterClientOptions connectedClusterOptions, TopologyRefresh topology, RespSetConnection directSets) {

    /** The clients of {@code settings} on {@code resources}, connections given {@code connectTimeout}; none connects yet. */
    static LettuceClients create(RemoteSettings settings, ClientResources resources, Duration connectTimeout) {
        List<RedisURI> uris = new ArrayList<>();
        for (String u : settings.urls()) {
            RedisURI.Builder b = RedisURI.builder(RedisURI.create(RemoteSettings.withoutUser(u))).withTimeout(connectTimeout);
            if (settings.password() != null) {
                b.withAuthentication(RemoteSettings.userOf(u), settings.password());
            }
            uris.add(b.build());
        }
        SocketOptions socket = SocketOptions.builder().connectTimeout(connectTimeout).build();
        TimeoutOptions timeouts = TimeoutOptions.enabled(settings.timeout());
        SslOptions ssl = LettuceRemoteStore.sslOptions(settings);
        RedisURI first = uris.get(0);
        String user = RemoteSettings.userOf(settings.urls().get(0));
        RespSetConnection directSets = settings.cluster() || first.isSsl() || !LettuceRemoteStore.DIRECT_SETS ? null
                : new RespSetConnection(first.getHost(), first.getPort(), "default".equals(user) ? null : user,
                        settings.password(), first.getDatabase(), settings.ttl(), settings.timeout());
        if (settings.cluster()) {
            RedisClusterClient cluster = RedisClusterClient.create(resources, uris);
            cluster.setOptions(TopologyRefresh.options(socket, timeouts, ssl, false));
            return new LettuceClients(uris, null, cluster, TopologyRefresh.options(socket, timeouts, ssl, true),
                    new TopologyRefresh(cluster), directSets);
        }
        RedisClient client = RedisClient.create(resources);
        client.setOptions(ClientOptions.builder().socketOptions(socket).timeoutOptions(timeouts).sslOptions(ssl)
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS).build());
        return new LettuceClients(uris, client, null, null, null, directSets);
    }

    /** Closes the direct SET connection, then the client (bounded: {@link LettuceResources#shutdown}) and {@code resources}. */
    void close(ClientResources resources) {
        if (directSets != null) {
            directSets.close();
        }
        LettuceResources.shutdown(client != null ? client : clusterClient, resources);
    }
}

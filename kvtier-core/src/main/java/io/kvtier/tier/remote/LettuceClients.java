package io.kvtier.tier.remote;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.SslOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.BaseRedisAsyncCommands;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.resource.ClientResources;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

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

    /**
     * {@code conn}, or a failure with the server's refusal of the settings' password as one it has no
     * use for, the connection closed: a password given for user {@code default} (the URL names no
     * user) to a server whose default user has none. The handshake's {@code AUTH default <password>}
     * passes such a server (a user without a password takes any), so the password went unnoticed in
     * generate and serve where bench offload's redis-benchmark, which sends {@code AUTH <password>},
     * refused it (a new user's trial); this sends that AUTH too. Any other answer keeps the connection.
     */
    static <C extends StatefulConnection<String, byte[]>> CompletionStage<C> refuseUnwantedPassword(RemoteSettings settings, C conn) {
        if (settings.password() == null || RemoteSettings.namesUser(settings.urls().get(0))) {
            return CompletableFuture.completedFuture(conn);
        }
        BaseRedisAsyncCommands<String, byte[]> commands = conn instanceof StatefulRedisClusterConnection<String, byte[]> c ? c.async()
                : ((StatefulRedisConnection<String, byte[]>) conn).async();
        CommandArgs<String, byte[]> args = new CommandArgs<>(ChunkCodec.INSTANCE).add(settings.password());
        return commands.dispatch(CommandType.AUTH, new StatusOutput<>(ChunkCodec.INSTANCE), args).handle((ok, err) -> {
            if (err != null && RemoteErrors.isUnwantedPassword(RemoteErrors.messageOf(err))) {
                conn.closeAsync();
                throw err instanceof CompletionException ce ? ce : new CompletionException(err);
            }
            return conn;
        });
    }

    /** Closes the direct SET connection, then the client (bounded: {@link LettuceResources#shutdown}) and {@code resources}. */
    void close(ClientResources resources) {
        if (directSets != null) {
            directSets.close();
        }
        LettuceResources.shutdown(client != null ? client : clusterClient, resources);
    }
}

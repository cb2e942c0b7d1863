package io.kvtier.tier.remote;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.SslOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.models.partitions.Partitions;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How {@link LettuceRemoteStore} follows a cluster's topology: the client's refresh options (a
 * rare periodic refresh, Lettuce's adaptive triggers at most once per {@link #GAP}) and the
 * refreshes the store asks for itself when a node's command times out or is refused. Thread-safe.
 */
final class TopologyRefresh {

    /**
     * Period of the cluster's topology refresh when nothing triggers one. Each refresh connects
     * to every known node and asks it for the topology: once a second that cost an idle engine
     * about 8% of a core (remote10). A failover is followed by the triggers instead
     * ({@link #GAP}); this one only catches a change that no command and no connection
     * noticed (a slot moved while the engine was idle is answered MOVED at the next command).
     */
    static final Duration PERIODIC = Duration.ofSeconds(60);
    /**
     * Least time between two triggered topology refreshes: Lettuce's adaptive triggers (a MOVED
     * or ASK reply, a node reconnecting 5 times or more, a slot without a master, an unknown
     * node) and this store's own on a timed-out or refused command of a cluster node (a frozen
     * master gives no reconnect). Lettuce's default of 30 s would let the one trigger fired when
     * a master died (before its replica took over) hold the next back for that long.
     */
    static final Duration GAP = Duration.ofSeconds(1);

    private final RedisClusterClient client;
    /** Nano time from which {@link #request} may ask again; {@link Long#MAX_VALUE} while its refresh runs. */
    private final AtomicLong next = new AtomicLong(System.nanoTime());

    TopologyRefresh(RedisClusterClient client) {
        this.client = client;
    }

    /**
     * The cluster client's options. {@code discover}: a topology refresh asks every node the
     * last topology named (Lettuce's dynamic refresh sources), not only the seeds. The first
     * topology is asked of the seeds alone: with discovery it took a second round (a connection
     * and a handshake to every other node, after the seeds had answered), and it waited for the
     * slowest node, a frozen one for the whole 10 s handshake deadline. Once connected, refreshes
     * ask every known node, so a failover is followed even when the seeds are gone.
     */
    static ClusterClientOptions options(SocketOptions socket, TimeoutOptions timeouts, SslOptions ssl,
                                       boolean discover) {
        return ClusterClientOptions.builder()
                .socketOptions(socket).timeoutOptions(timeouts).sslOptions(ssl)
                // Node connections open lazily: commands queue while one connects (a dead
                // node's commands then end by the timeout, and its breaker opens).
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.DEFAULT)
                .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                        .enablePeriodicRefresh(PERIODIC)
                        .enableAllAdaptiveRefreshTriggers()
                        .adaptiveRefreshTriggersTimeout(GAP)
                        .dynamicRefreshSources(discover)
                        .build())
                .build();
    }

    /**
     * Which breakers count in a cluster of this topology: the nodes that own slots now, and the
     * slots no master serves (named {@code noMaster} and the slot). A node that no longer serves
     * a slot (a failed-over master) gets no command, so its breaker would stay open for ever.
     */
    static java.util.function.Predicate<String> servesNow(Partitions partitions, String noMaster) {
        java.util.Set<String> owners = owners(partitions);
        return node -> owners.contains(node) || node.startsWith(noMaster)
                && partitions.getMasterBySlot(Integer.parseInt(node.substring(noMaster.length()))) == null;
    }

    /** The ids of the nodes that own slots in {@code partitions} (the masters serving now). */
    static java.util.Set<String> owners(Partitions partitions) {
        java.util.Set<String> owners = new java.util.HashSet<>();
        for (RedisClusterNode n : partitions) {
            if (!n.getSlots().isEmpty()) {
                owners.add(n.getNodeId());
            }
        }
        return owners;
    }

    /**
     * Asks the cluster for its topology now, in the background, unless a refresh asked for here
     * is running or ended less than {@link #GAP} ago. A frozen master gives Lettuce no
     * trigger of its own (its connection stays up; its commands time out), so without this its
     * replica's takeover would wait for the {@link #PERIODIC}.
     */
    void request() {
        long at = next.get();
        if (at == Long.MAX_VALUE || System.nanoTime() - at < 0 || !next.compareAndSet(at, Long.MAX_VALUE)) {
            return;
        }
        try {
            client.refreshPartitionsAsync()
                    .whenComplete((v, e) -> next.set(System.nanoTime() + GAP.toNanos()));
        } catch (RuntimeException e) { // the client is shutting down
            next.set(System.nanoTime() + GAP.toNanos());
        }
    }
}

package io.kvtier.tier.remote;

import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import java.util.Set;

/**
 * The nodes of a remote store's connection, by the names their circuit breakers have: which
 * node holds a key, which nodes serve now, and how a line names one. A standalone store has one
 * node; a cluster's are its masters by id, and a slot no master serves has a name of its own.
 * Stateless: each answer reads the connection's topology as it is now.
 */
final class RemoteNodes {

    /** The one node of a standalone store. */
    static final String STANDALONE = "standalone";
    /** Name of a slot no master serves: this prefix and the slot number. */
    static final String NO_MASTER = "slot-";

    private RemoteNodes() {
    }

    /** The node of {@code key}: the master owning its slot in a cluster. */
    static String of(StatefulConnection<String, byte[]> conn, String key) {
        if (!(conn instanceof StatefulRedisClusterConnection<String, byte[]> c)) {
            return STANDALONE;
        }
        RedisClusterNode n = c.getPartitions().getMasterBySlot(SlotHash.getSlot(key));
        return n == null ? NO_MASTER + SlotHash.getSlot(key) : n.getNodeId();
    }

    /** The nodes serving now: the one server, or the masters owning slots. */
    static Set<String> serving(StatefulConnection<String, byte[]> conn) {
        return conn instanceof StatefulRedisClusterConnection<String, byte[]> c ? TopologyRefresh.owners(c.getPartitions())
                : Set.of(STANDALONE);
    }

    /** The server holding {@code key} for a line: the URL when standalone, the slot's master ({@code host:port}) in a cluster. */
    static String where(StatefulConnection<String, byte[]> conn, String url, String key) {
        if (conn instanceof StatefulRedisClusterConnection<String, byte[]> c) {
            RedisClusterNode n = c.getPartitions().getMasterBySlot(SlotHash.getSlot(key));
            return n == null ? "the cluster (no master for slot " + SlotHash.getSlot(key) + ")" : name(n);
        }
        return RemoteSettings.redact(url);
    }

    /** {@link #where} of a node by its name. */
    static String whereNode(StatefulConnection<String, byte[]> conn, String url, String node) {
        if (conn instanceof StatefulRedisClusterConnection<String, byte[]> c) {
            RedisClusterNode n = c.getPartitions().getPartitionByNodeId(node);
            return n == null ? "cluster node " + node : name(n);
        }
        return RemoteSettings.redact(url);
    }

    /** {@code host:port} of a node by its name (the URL's for the one server), or null when the topology has it no more. */
    static String address(StatefulConnection<String, byte[]> conn, io.lettuce.core.RedisURI url, String node) {
        if (conn instanceof StatefulRedisClusterConnection<String, byte[]> c) {
            RedisClusterNode n = c.getPartitions().getPartitionByNodeId(node);
            return n == null ? null : n.getUri().getHost() + ":" + n.getUri().getPort();
        }
        return url.getHost() + ":" + url.getPort();
    }

    private static String name(RedisClusterNode n) {
        return "cluster node " + n.getUri().getHost() + ":" + n.getUri().getPort();
    }
}

package io.kvtier.tier.remote;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A private 3-master, 3-replica Redis Cluster for one test ({@link OwnRedis} nodes on free
 * loopback ports, {@code cluster-node-timeout} 1 s so that a failover takes about a second). The
 * replicas start with automatic failover off ({@code cluster-replica-no-failover}), so a test
 * that kills a master decides when its replica takes over ({@link #allowFailover()}); everything
 * else about the failover is the server's own. Stopped by {@link #close()}.
 */
public final class OwnCluster implements AutoCloseable {

    private final List<OwnRedis> nodes;

    private OwnCluster(List<OwnRedis> nodes) {
        this.nodes = nodes;
    }

    public static OwnCluster start(Path root) throws Exception {
        List<OwnRedis> nodes = new ArrayList<>();
        try {
            List<String> addresses = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                OwnRedis n = OwnRedis.start(root.resolve("n" + i), "cluster-enabled yes", "cluster-node-timeout 1000",
                        "cluster-replica-no-failover yes",
                        // A replica cut from its master longer than 10 node timeouts refuses to
                        // fail over by default; the test decides when it may, however long before.
                        "cluster-replica-validity-factor 0");
                nodes.add(n);
                addresses.add("127.0.0.1:" + n.port());
            }
            List<String> create = new ArrayList<>(List.of("--cluster", "create"));
            create.addAll(addresses);
            create.addAll(List.of("--cluster-replicas", "1", "--cluster-yes"));
            nodes.get(0).cli(create.toArray(String[]::new));
            OwnCluster c = new OwnCluster(nodes);
            c.awaitConsistent();
            return c;
        } catch (Exception e) {
            for (OwnRedis n : nodes) {
                n.close();
            }
            throw e;
        }
    }

    /** Seed URLs of every node. */
    public List<String> urls() {
        return nodes.stream().map(OwnRedis::url).toList();
    }

    /** Nodes that are masters now (alive ones only). */
    public List<OwnRedis> masters() throws Exception {
        List<OwnRedis> m = new ArrayList<>();
        for (OwnRedis n : nodes) {
            if (n.isAlive() && n.cli("role").startsWith("master")) {
                m.add(n);
            }
        }
        return m;
    }

    /** The replica of {@code master}. */
    public OwnRedis replicaOf(OwnRedis master) throws Exception {
        String id = master.cli("cluster", "myid");
        for (OwnRedis n : nodes) {
            if (n != master && n.isAlive()) {
                Optional<String> mine = lines(n).stream().filter(l -> l.contains("myself")).findFirst();
                if (mine.isPresent() && mine.get().split(" ")[3].equals(id)) {
                    return n;
                }
            }
        }
        throw new AssertionError("no replica of the master on port " + master.port());
    }

    /** Waits until {@code master}'s replica has received every write the master has. */
    public void awaitReplicated(OwnRedis master) throws Exception {
        for (int attempt = 0; attempt < 400; attempt++) {
            String info = master.cli("info", "replication");
            long offset = -1;
            long replicaOffset = -2;
            for (String line : info.split("\\R")) {
                if (line.startsWith("master_repl_offset:")) {
                    offset = Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
                } else if (line.startsWith("slave0:")) {
                    for (String part : line.substring(7).split(",")) {
                        if (part.startsWith("offset=")) {
                            replicaOffset = Long.parseLong(part.substring(7));
                        }
                    }
                }
            }
            if (offset == replicaOffset) {
                return;
            }
            Thread.sleep(25);
        }
        throw new AssertionError("the replica of the master on port " + master.port() + " did not catch up");
    }

    /** Lets the replicas fail over a dead master (the server's automatic failover). */
    public void allowFailover() throws Exception {
        for (OwnRedis n : nodes) {
            if (n.isAlive()) {
                n.cli("config", "set", "cluster-replica-no-failover", "no");
            }
        }
    }

    /**
     * Waits (at most 30 s) until every alive node says {@code cluster_state:ok} and sees every slot
     * served by a master that is alive (this test's process for it runs): a client that asks any of
     * them for the topology then gets the same, right answer. Both halves matter: right after a
     * failover some nodes still show the dead master's slots, and for about a node timeout after
     * a kill no node has noticed yet (they all show the dead master as healthy, cluster_state:ok),
     * which a check of the nodes' own flags alone takes for settled.
     */
    public void awaitConsistent() throws Exception {
        for (int attempt = 0; attempt < 600; attempt++) {
            if (consistent()) {
                return;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("the test cluster did not settle: every alive node at cluster_state:ok, every slot on an alive master");
    }

    private boolean consistent() throws Exception {
        java.util.Set<Integer> alivePorts = new java.util.HashSet<>();
        for (OwnRedis n : nodes) {
            if (n.isAlive()) {
                alivePorts.add(n.port());
            }
        }
        for (OwnRedis n : nodes) {
            if (!n.isAlive()) {
                continue;
            }
            if (!n.cli("cluster", "info").contains("cluster_state:ok")) {
                return false;
            }
            int slots = 0;
            for (String line : lines(n)) {
                String[] f = line.split(" ");
                List<String> flags = List.of(f.length > 2 ? f[2].split(",") : new String[0]);
                if (f.length < 9 || !flags.contains("master")) {
                    continue;
                }
                if (flags.contains("fail") || flags.contains("fail?")) {
                    return false; // a failed master still holding slots in this node's view
                }
                if (!alivePorts.contains(portOf(f[1]))) {
                    return false; // a dead master not noticed yet: its slots are not served
                }
                for (int i = 8; i < f.length; i++) {
                    if (f[i].startsWith("[")) {
                        continue; // a slot being migrated
                    }
                    int dash = f[i].indexOf('-');
                    slots += dash < 0 ? 1 : Integer.parseInt(f[i].substring(dash + 1)) - Integer.parseInt(f[i].substring(0, dash)) + 1;
                }
            }
            if (slots != 16384) {
                return false;
            }
        }
        return true;
    }

    /** The client port of a CLUSTER NODES address ({@code ip:port@busport}). */
    private static int portOf(String address) {
        int colon = address.lastIndexOf(':');
        int at = address.indexOf('@', colon);
        return Integer.parseInt(address.substring(colon + 1, at < 0 ? address.length() : at));
    }

    private static List<String> lines(OwnRedis n) throws Exception {
        return List.of(n.cli("cluster", "nodes").split("\\R"));
    }

    @Override
    public void close() throws Exception {
        for (OwnRedis n : nodes) {
            n.close();
        }
    }
}

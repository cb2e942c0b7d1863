package io.kvtier.tier.remote;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One store, open through a failover, serves the failed master's keys from its promoted replica
 * well before the periodic topology refresh ({@link TopologyRefresh#PERIODIC}) would have told
 * it: a killed master (Lettuce's reconnect trigger) and a frozen one (its commands time out, and
 * the store asks for the topology itself). The bound is half that period, whatever the load: a
 * store that waited for the period would fail it.
 */
class RemoteClusterFailoverTest {

    private static final int KEYS = 48;

    @TempDir
    Path dir;

    private static String key(int i) {
        return "kvt:v1:failover:" + i;
    }

    private static byte[] value(int i) {
        byte[] v = new byte[64];
        Arrays.fill(v, (byte) i);
        return v;
    }

    /** Writes every key through {@code s}; the keys the {@code victim} master holds, as the server lists them. */
    private static List<Integer> writeAndFindVictimsKeys(LettuceRemoteStore s, OwnCluster cluster, OwnRedis victim)
            throws Exception {
        for (int i = 0; i < KEYS; i++) {
            s.set(key(i), value(i)).get();
        }
        cluster.awaitReplicated(victim);
        List<Integer> held = Arrays.stream(victim.cli("keys", "kvt:v1:failover:*").split("\\R"))
                .filter(k -> !k.isBlank()).map(k -> Integer.parseInt(k.substring(k.lastIndexOf(':') + 1))).toList();
        assertThat(held).as("the victim holds some of the keys").isNotEmpty().hasSizeLessThan(KEYS);
        return held;
    }

    /**
     * Reads {@code keys} through {@code s} until every one answers its value, at most half the
     * periodic refresh; how long it took, in ms.
     */
    private static long servedAgainWithin(LettuceRemoteStore s, List<Integer> keys) throws Exception {
        long t0 = System.nanoTime();
        long end = t0 + TopologyRefresh.PERIODIC.toNanos() / 2;
        Map<Integer, byte[]> got = new HashMap<>();
        while (got.size() < keys.size() && System.nanoTime() < end) {
            for (int k : keys) {
                if (!got.containsKey(k)) {
                    try {
                        byte[] v = s.get(key(k)).get();
                        if (v != null) {
                            got.put(k, v);
                        }
                    } catch (ExecutionException notYet) {
                        // the shard is still unavailable to this store
                    }
                }
            }
            Thread.sleep(50);
        }
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertThat(got.keySet()).as("the failed master's keys served again after %d ms (load %s)", ms, loadAverage())
                .containsExactlyInAnyOrderElementsOf(keys);
        got.forEach((k, v) -> assertThat(v).as("key %d", k).isEqualTo(value(k)));
        return ms;
    }

    private static String loadAverage() {
        return String.format("%.1f", java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    }

    private static LettuceRemoteStore open(OwnCluster cluster, List<String> warnings) {
        return LettuceRemoteStore.open(RemoteSettings.of(cluster.urls(), true, "failover", null)
                .withTimeout(Duration.ofSeconds(1)).withBreakerOpen(Duration.ofMillis(200)), warnings::add);
    }

    /** How a test fails a master over: {@code victim} out of service, its {@code replica} a master when it returns. */
    @FunctionalInterface
    private interface Failover {
        void run(OwnCluster cluster, OwnRedis victim, OwnRedis replica) throws Exception;
    }

    /** Writes the keys, fails the first master over as {@code failover} says, and reads its keys back through the same store. */
    private void servedThroughAFailover(String what, Failover failover) throws Exception {
        List<String> warnings = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (OwnCluster cluster = OwnCluster.start(dir.resolve("c")); LettuceRemoteStore s = open(cluster, warnings)) {
            OwnRedis victim = cluster.masters().get(0);
            OwnRedis replica = cluster.replicaOf(victim);
            List<Integer> held = writeAndFindVictimsKeys(s, cluster, victim);
            failover.run(cluster, victim, replica);
            assertThat(replica.cli("role")).as("the replica took over").startsWith("master");
            System.out.printf("%s: served again %d ms after its replica took over%n", what, servedAgainWithin(s, held));
            // The only lines: the victim's breaker opening, said once, and all answering again after.
            if (!warnings.isEmpty()) {
                assertThat(warnings.getFirst()).startsWith("remote tier: cluster node 127.0.0.1:" + victim.port() + " stopped answering (");
                assertThat(warnings).hasSize(2).last().isEqualTo("remote tier: every cluster node answers again");
            }
        }
    }

    @Test
    void aKilledMastersKeysAreServedByItsReplicaThroughTheSameStore() throws Exception {
        servedThroughAFailover("killed master", (cluster, victim, replica) -> {
            victim.kill();
            cluster.allowFailover();
            cluster.awaitConsistent();
        });
    }

    @Test
    void aFrozenMastersKeysAreServedByItsReplicaThroughTheSameStore() throws Exception {
        servedThroughAFailover("frozen master", (cluster, victim, replica) -> {
            cluster.allowFailover(); // first: a frozen node would not answer the CONFIG SET
            victim.freeze(); // its connections stay up: no reconnect tells the client anything
            for (int i = 0; i < 600 && !replica.cli("role").startsWith("master"); i++) {
                Thread.sleep(50);
            }
        });
    }
}

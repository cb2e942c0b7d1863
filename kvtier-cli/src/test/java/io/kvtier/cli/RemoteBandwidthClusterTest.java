package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.tier.remote.RedisServers;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanIterator;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code bench offload} against a Redis Cluster (a new user's trial: the README's repeated
 * {@code --remote-url} seeds were refused, there was no {@code --remote-mode}, and a cluster node
 * given in standalone mode was blamed on the ACL).
 */
@org.junit.jupiter.api.extension.ExtendWith(OneWarmUpRound.class) // each size's warm-up: one round
class RemoteBandwidthClusterTest {

    /** Seeds, {@code --remote-mode cluster}: the table of every size, on the cluster, nothing of the bench left on it. */
    @Test
    void theTableOnAClusterHasEverySizeAndLeavesNoKey() {
        List<String> seeds = RedisServers.cluster();
        List<String> args = new ArrayList<>(List.of("bench", "offload", "--remote-mode", "cluster", "--skip-bandwidth", "--skip-ttft",
                "--skip-decode", "--remote-requests", "8", "--remote-mib-per-size", "1", "--repeats", "1"));
        seeds.forEach(u -> args.addAll(List.of("--remote-url", u)));
        CliRun r = CliRun.of(args.toArray(String[]::new));
        assertThat(r.code()).as(r.err()).isZero();
        List<String> lines = r.out().lines().toList();
        assertThat(lines.getFirst()).startsWith("== remote tier throughput against the cluster of " + seeds.getFirst() + " ("
                + seeds.size() + " seeds), MB/s: the tier one connection to each master, up to 16 SETs in flight; redis-benchmark one connection"
                + " to 127.0.0.1:").contains("(the master of key:__rand_int__), 8 commands in flight (redis-benchmark -c 1 -P 8; the"
                + " tier's write jobs overlap");
        // At least: 64 KiB, 1 MiB is 16 values; 256 KiB and up, 8; more until 0.2 s of each.
        RemoteBandwidthTest.assertTable(lines, new long[] {16, 8, 8, 8});
        assertThat(r.err()).as("nothing but the JVM's own lines").doesNotContain("kvtier:");
        RedisClusterClient client = RedisClusterClient.create(seeds.stream().map(RedisURI::create).toList());
        try (StatefulRedisClusterConnection<String, String> c = client.connect()) {
            assertThat(ScanIterator.scan(c.sync(), ScanArgs.Builder.matches("kvt:v1:bench:*")).stream().toList())
                    .as("the tier's keys deleted").isEmpty();
            assertThat(c.sync().exists("key:__rand_int__")).as("redis-benchmark's key deleted").isZero();
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    /**
     * A cluster node without {@code --remote-mode cluster}: the one line {@code generate} says for
     * it, before any figure (it said "cannot write key:__rand_int__ (MOVED ...)" and blamed the
     * user's ACL). A replica answers MOVED for every key, whichever slots the bench's keys hash to.
     */
    @Test
    void aClusterNodeInStandaloneModeIsOneLineNamingTheMode() {
        String replica = RedisServers.cluster().stream().filter(RemoteBandwidthClusterTest::isReplica).findFirst().orElseThrow();
        CliRun r = CliRun.of("bench", "offload", "--remote-url", replica, "--skip-bandwidth", "--skip-ttft", "--skip-decode");
        assertThat(r.code()).as(r.err()).isEqualTo(2);
        assertThat(r.err()).startsWith("kvtier: --remote-url " + replica + " is a cluster node (MOVED ")
                .endsWith("): give --remote-mode cluster\n").hasLineCount(1);
        assertThat(r.out()).isEmpty();
    }

    private static boolean isReplica(String url) {
        RedisClient client = RedisClient.create(url);
        try (StatefulRedisConnection<String, String> c = client.connect()) {
            return c.sync().info("replication").contains("role:slave");
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }
}

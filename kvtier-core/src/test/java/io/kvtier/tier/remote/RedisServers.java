package io.kvtier.tier.remote;

import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.Arrays;
import java.util.List;

/**
 * The shared servers that {@code .ci/redis-up} started, from the environment:
 * {@code KVTIER_REDIS_URL} (standalone), {@code KVTIER_REDIS_CLUSTER_URLS} (comma-separated
 * seeds of a 3-master, 3-replica cluster), {@code KVTIER_VALKEY_URL} (standalone Valkey, when it
 * installed). Without them a test is skipped with a message saying how to start them, except
 * under {@code CI=true}, where it fails (CI always starts Redis; Valkey is optional there).
 * Tests that stop, freeze or fill a server start their own ({@link OwnRedis}) instead.
 */
public final class RedisServers {

    private RedisServers() {
    }

    private static String need(String var, boolean requiredInCi) {
        String v = System.getenv(var);
        if (v != null && !v.isBlank()) {
            return v.trim();
        }
        String msg = var + " is not set: start the test servers with `eval \"$(.ci/redis-up)\"` (see .ci/run)";
        if (requiredInCi && "true".equals(System.getenv("CI"))) {
            fail("CI=true but " + msg);
        }
        assumeTrue(false, msg);
        return null;
    }

    /** The standalone Redis URL (skips or fails without it). */
    public static String standalone() {
        return need("KVTIER_REDIS_URL", true);
    }

    /** The cluster's seed URLs (skips or fails without them). */
    public static List<String> cluster() {
        return Arrays.asList(need("KVTIER_REDIS_CLUSTER_URLS", true).split(","));
    }

    /** The standalone Valkey URL (skips without it, also in CI: Valkey is installed only when it can be). */
    public static String valkey() {
        return need("KVTIER_VALKEY_URL", false);
    }

    /** Whether {@code redis-server} can be started by a test (skips, or fails in CI, when it cannot). */
    public static String serverBinary() {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin").split(":")) {
            if (java.nio.file.Files.isExecutable(java.nio.file.Path.of(dir, "redis-server"))) {
                return java.nio.file.Path.of(dir, "redis-server").toString();
            }
        }
        String msg = "redis-server is not installed: run .ci/redis-install";
        if ("true".equals(System.getenv("CI"))) {
            fail("CI=true but " + msg);
        }
        assumeTrue(false, msg);
        return null;
    }
}

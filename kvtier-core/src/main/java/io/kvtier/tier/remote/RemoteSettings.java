package io.kvtier.tier.remote;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * How to reach the remote store.
 *
 * @param urls           {@code redis://host:port} or {@code rediss://host:port} (TLS), optionally
 *                       with a user ({@code redis://user@host:port}); for a cluster, any seeds.
 *                       A password in a URL is refused: it would show in process lists and logs;
 *                       a user without {@code password} is refused too
 * @param cluster        Redis/Valkey Cluster (true) or one standalone server
 * @param tenant         key prefix of this group of engines (see {@link RemoteKeys})
 * @param password       password of the URL's user (or of {@code default}), from a file or an
 *                       environment variable; null for none. Never printed ({@link #toString()})
 * @param timeout        deadline of every operation, and of a connection attempt
 * @param ttl            expiry of stored values, {@link Duration#ZERO} for none
 * @param maxValueBytes  values larger than this are not sent (below the server's proto-max-bulk-len)
 * @param failuresToOpen consecutive failures of a node that open its breaker
 * @param breakerOpen    how long an open breaker refuses operations before a trial
 * @param caFile         PEM file of the certificate(s) that sign a {@code rediss://} server's
 *                       certificate, or null for the JVM's default trust store
 */
public record RemoteSettings(List<String> urls, boolean cluster, String tenant, String password, Duration timeout,
                             Duration ttl, long maxValueBytes, int failuresToOpen, Duration breakerOpen, Path caFile) {

    /** Redis's default proto-max-bulk-len (512 MiB) less room for the command around the value. */
    public static final long DEFAULT_MAX_VALUE_BYTES = (512L << 20) - (64 << 10);

    public RemoteSettings {
        urls = List.copyOf(urls);
        if (urls.isEmpty()) {
            throw new IllegalArgumentException("the remote tier needs at least one --remote-url");
        }
        if (!cluster && urls.size() > 1) {
            throw new IllegalArgumentException("--remote-mode standalone takes one --remote-url, got " + urls.size()
                    + " (give --remote-mode cluster for cluster seeds)");
        }
        for (String u : urls) {
            if (!u.startsWith("redis://") && !u.startsWith("rediss://")) {
                throw new IllegalArgumentException("--remote-url must start with redis:// or rediss://, got '"
                        + redact(u) + "'");
            }
            String authority = u.substring(u.indexOf("://") + 3);
            int at = authority.indexOf('@');
            if (at >= 0 && authority.substring(0, at).contains(":")) {
                throw new IllegalArgumentException("--remote-url must not hold a password (" + redact(u)
                        + "): give it with --remote-password-file or KVTIER_REMOTE_PASSWORD");
            }
            if (at > 0 && password == null) {
                // Without a password Lettuce would not authenticate at all: the engine would run as
                // the `default` user, past the ACL that confines the named user's tenant.
                throw new IllegalArgumentException("--remote-url " + u + " names user " + authority.substring(0, at)
                        + " but no password was given: give it with --remote-password-file or KVTIER_REMOTE_PASSWORD");
            }
            checkHostAndPort(u);
        }
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("remote timeout must be positive, got " + timeout.toMillis() + " ms");
        }
        if (ttl.isNegative()) {
            throw new IllegalArgumentException("remote TTL must not be negative");
        }
        if (caFile != null && urls.stream().noneMatch(u -> u.startsWith("rediss://"))) {
            throw new IllegalArgumentException("--remote-ca-file is for TLS: give rediss:// URLs");
        }
        if (maxValueBytes <= 0 || failuresToOpen < 1 || breakerOpen.isNegative()) {
            throw new IllegalArgumentException("remote value limit, breaker failures and open time must be positive");
        }
    }

    /** Settings with the defaults: 500 ms timeout, no TTL, 3 failures open a breaker for 1 s. */
    public static RemoteSettings of(List<String> urls, boolean cluster, String tenant, String password) {
        return new RemoteSettings(urls, cluster, tenant, password, Duration.ofMillis(500), Duration.ZERO,
                DEFAULT_MAX_VALUE_BYTES, 3, Duration.ofSeconds(1), null);
    }

    public RemoteSettings withTenant(String t) {
        return new RemoteSettings(urls, cluster, t, password, timeout, ttl, maxValueBytes, failuresToOpen, breakerOpen, caFile);
    }

    public RemoteSettings withTimeout(Duration t) {
        return new RemoteSettings(urls, cluster, tenant, password, t, ttl, maxValueBytes, failuresToOpen, breakerOpen, caFile);
    }

    public RemoteSettings withTtl(Duration t) {
        return new RemoteSettings(urls, cluster, tenant, password, timeout, t, maxValueBytes, failuresToOpen, breakerOpen, caFile);
    }

    public RemoteSettings withMaxValueBytes(long n) {
        return new RemoteSettings(urls, cluster, tenant, password, timeout, ttl, n, failuresToOpen, breakerOpen, caFile);
    }

    public RemoteSettings withBreakerOpen(Duration d) {
        return new RemoteSettings(urls, cluster, tenant, password, timeout, ttl, maxValueBytes, failuresToOpen, d, caFile);
    }

    public RemoteSettings withCaFile(Path f) {
        return new RemoteSettings(urls, cluster, tenant, password, timeout, ttl, maxValueBytes, failuresToOpen, breakerOpen, f);
    }

    /**
     * Checks that {@code url} names a host (one colon before the port; an IPv6 address in
     * brackets), if it gives one a port in 1..65535, and if it has a path a database number
     * ({@code /3}), and that it has no query or fragment: the client would otherwise fail later
     * with a message that does not name the flag ({@code For input string: "abc"}), keep trying a
     * host it cannot parse, or read a {@code ?timeout=} that kvtier's own connection ignores.
     */
    private static void checkHostAndPort(String url) {
        java.net.URI uri;
        try {
            uri = new java.net.URI(url);
        } catch (java.net.URISyntaxException e) {
            throw new IllegalArgumentException("--remote-url '" + redact(url) + "' is not a URL (" + e.getReason()
                    + "); expected redis://[user@]host:port");
        }
        if (uri.getRawQuery() != null || uri.getRawFragment() != null) {
            // Lettuce reads some query parameters (timeout, database) and kvtier's own SET
            // connection none: one meaning for both is the path and the flags, so refuse the rest.
            throw new IllegalArgumentException("--remote-url '" + redact(url) + "': kvtier reads no "
                    + (uri.getRawQuery() != null ? "query ('?" + uri.getRawQuery() + "')" : "fragment ('#" + uri.getRawFragment() + "')")
                    + "; give the database as the path (redis://host:port/3), the timeout with --remote-timeout,"
                    + " the password with --remote-password-file");
        }
        String authority = uri.getRawAuthority() == null ? "" : uri.getRawAuthority();
        String hostPort = authority.substring(authority.indexOf('@') + 1);
        int colon = hostPort.lastIndexOf(':');
        String port = colon >= 0 && !hostPort.endsWith("]") ? hostPort.substring(colon + 1) : null;
        String host = port == null ? hostPort : hostPort.substring(0, colon);
        if (host.isEmpty() || host.equals("[]")) {
            throw new IllegalArgumentException("--remote-url '" + redact(url) + "' names no host; expected redis://[user@]host:port");
        }
        if (!host.startsWith("[") && host.contains(":")) {
            throw new IllegalArgumentException("--remote-url '" + redact(url) + "': host '" + host
                    + "' has a colon; expected redis://[user@]host:port (an IPv6 address in brackets)");
        }
        String path = uri.getRawPath() == null ? "" : uri.getRawPath();
        if (!path.isEmpty() && !path.equals("/") && !path.substring(1).matches("[0-9]{1,9}")) {
            throw new IllegalArgumentException("--remote-url '" + redact(url) + "': the database (the URL's path) must be a number"
                    + " from 0, as in redis://host:port/3, got '" + path.substring(1) + "'");
        }
        if (port != null) {
            int p;
            try {
                p = Integer.parseInt(port);
            } catch (NumberFormatException e) {
                p = -1;
            }
            if (p < 1 || p > 65535) {
                throw new IllegalArgumentException("--remote-url '" + redact(url) + "': the port must be a number from 1 to 65535, got '"
                        + port + "'");
            }
        }
    }

    /** A URL with any user-info part replaced by {@code ***}, for messages. */
    public static String redact(String url) {
        int scheme = url.indexOf("://");
        int at = url.lastIndexOf('@');   // the last: a password may hold '@' itself
        return scheme >= 0 && at > scheme ? url.substring(0, scheme + 3) + "***" + url.substring(at) : url;
    }

    /**
     * {@code url} as a line about reaching it shows it: with {@code " (port 6379)"} after it when it
     * gives no port, the one the client takes then ({@link io.lettuce.core.RedisURI#DEFAULT_REDIS_PORT};
     * {@code cannot reach redis://127.0.0.1 (connection refused)} did not say which port was tried).
     */
    public static String withPort(String url) {
        try {
            return new java.net.URI(url).getPort() < 0 ? url + " (port " + io.lettuce.core.RedisURI.DEFAULT_REDIS_PORT + ")" : url;
        } catch (java.net.URISyntaxException e) {
            return url; // refused when the settings were made; nothing to add
        }
    }

    @Override
    public String toString() {
        return "RemoteSettings[urls=" + urls.stream().map(RemoteSettings::redact).toList() + " cluster=" + cluster
                + " tenant=" + tenant + " password=" + (password == null ? "none" : "***") + " timeout=" + timeout
                + " ttl=" + ttl + " maxValueBytes=" + maxValueBytes + (caFile == null ? "" : " caFile=" + caFile) + "]";
    }

    /** The user named in a URL ({@code redis://user@host:port}), else {@code default}. */
    static String userOf(String url) {
        String authority = url.substring(url.indexOf("://") + 3);
        int at = authority.indexOf('@');
        return at > 0 ? authority.substring(0, at) : "default";
    }

    /**
     * Whether a URL names a user other than {@code default} ({@code redis://user@host:port}); else the user
     * is {@code default}, named or not: {@code redis://default@host} with a needless password was taken
     * where the same URL without {@code default@} was refused ({@link LettuceClients#refuseUnwantedPassword}).
     */
    public static boolean namesUser(String url) {
        return !userOf(url).equals("default");
    }

    /** The URL without its user part (Lettuce would read {@code user@} as a password). */
    static String withoutUser(String url) {
        int scheme = url.indexOf("://") + 3;
        int at = url.indexOf('@', scheme);
        return at > 0 ? url.substring(0, scheme) + url.substring(at + 1) : url;
    }
}

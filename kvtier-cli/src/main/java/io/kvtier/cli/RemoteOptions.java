package io.kvtier.cli;

import io.kvtier.engine.OffloadSetup;
import io.kvtier.offload.DiskWritePolicy;
import io.kvtier.tier.remote.RemoteSettings;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The remote tier (Redis / Valkey) behind the host tier: {@code --remote-url} and the flags that
 * need it. The password comes from {@code --remote-password-file} or the environment variable
 * {@value #PASSWORD_ENV}, never from the command line, and is never printed.
 */
public final class RemoteOptions {

    /** Environment variable holding the remote password when no file is given. */
    public static final String PASSWORD_ENV = "KVTIER_REMOTE_PASSWORD";

    @Spec(Spec.Target.MIXEE)
    CommandSpec mixee;

    @Option(names = "--remote-url", paramLabel = "URL",
            description = "put a remote KV tier (Redis or Valkey) behind the host tier: redis://[user@]host:port, or "
                    + "rediss:// for TLS; repeat for cluster seeds. No password in the URL: see --remote-password-file")
    List<String> urls = new ArrayList<>();

    @Option(names = "--remote-mode", defaultValue = "standalone", paramLabel = "standalone|cluster",
            description = "one server (default) or a Redis/Valkey Cluster")
    String mode;

    @Option(names = "--remote-tenant", defaultValue = "default", paramLabel = "NAME",
            description = "key prefix of the engines that share chunks (kvt:v1:NAME:...; ACL key patterns isolate tenants; default ${DEFAULT-VALUE})")
    String tenant;

    /** {@code --remote-password-file}'s description, shared with {@code bench offload}. */
    static final String PASSWORD_FILE_DESCRIPTION = "file holding the password of the URL's user (or of 'default'); without it, "
            + "the environment variable " + PASSWORD_ENV + " if set";

    @Option(names = "--remote-password-file", paramLabel = "FILE", description = PASSWORD_FILE_DESCRIPTION)
    Path passwordFile;

    @Option(names = "--remote-ca-file", paramLabel = "FILE",
            description = "PEM file of the CA certificate(s) that signed the rediss:// server's certificate "
                    + "(default: the JVM's trusted CAs)")
    Path caFile;

    @Option(names = "--remote-write-policy", defaultValue = "through", paramLabel = "through|on-evict",
            description = "through (default: after every host store) or on-evict (when the host tier evicts)")
    String writePolicy;

    @Option(names = "--remote-admit-after", defaultValue = "1", paramLabel = "N",
            description = "write a chunk to the remote tier only from its N-th use (default ${DEFAULT-VALUE})")
    int admitAfter;

    @Option(names = "--remote-ttl", defaultValue = "0", paramLabel = "SECONDS",
            description = "expire stored chunks after this long (default ${DEFAULT-VALUE}: never; the server's eviction still applies)")
    double ttl;

    @Option(names = "--remote-timeout", defaultValue = "500", paramLabel = "MS",
            description = "deadline of every remote operation in milliseconds (default ${DEFAULT-VALUE}); a late answer is a miss")
    long timeoutMillis;

    @Option(names = "--remote-max-in-flight", defaultValue = "64M", paramLabel = "SIZE",
            description = "bytes of chunks being written at once; writes beyond it are dropped and counted; at least one chunk's "
                    + "value (default ${DEFAULT-VALUE})")
    String maxInFlight;

    @Option(names = "--remote-max-value", defaultValue = "511M", paramLabel = "SIZE",
            description = "largest value sent; a larger chunk is not stored (default ${DEFAULT-VALUE}, lowered to the server's "
                    + "proto-max-bulk-len when CONFIG GET is allowed)")
    String maxValue;

    @Option(names = "--remote-breaker-open", defaultValue = "1000", paramLabel = "MS",
            description = "after 3 failed operations a node is skipped (misses, dropped writes) for this long, then tried again "
                    + "(default ${DEFAULT-VALUE})")
    long breakerOpenMillis;

    /** Whether a remote tier was asked for. */
    public boolean enabled() {
        return !urls.isEmpty();
    }

    /**
     * The remote tier, or null without {@code --remote-url}.
     *
     * @throws BadInputException for a bad value, an unreadable password file, or a remote flag without {@code --remote-url}
     */
    public OffloadSetup.RemoteSetup setup() {
        Checks.needs(mixee, !urls.isEmpty(), "--remote-url", "--remote-mode", "--remote-tenant", "--remote-password-file",
                "--remote-ca-file", "--remote-write-policy", "--remote-admit-after", "--remote-ttl", "--remote-timeout", "--remote-max-in-flight",
                "--remote-max-value", "--remote-breaker-open");
        if (urls.isEmpty()) {
            return null;
        }
        if (!mode.equals("standalone") && !mode.equals("cluster")) {
            throw new BadInputException("--remote-mode must be standalone or cluster, got '" + mode + "'");
        }
        Checks.atLeast(admitAfter, 1, "--remote-admit-after");
        Checks.atLeast(timeoutMillis, 1, "--remote-timeout");
        Checks.atLeast(breakerOpenMillis, 0, "--remote-breaker-open");
        if (!(ttl >= 0) || ttl > 365 * 86_400.0) {
            throw new BadInputException("--remote-ttl must be between 0 and 31536000 seconds, got " + Checks.shown(ttl));
        }
        DiskWritePolicy policy;
        try {
            policy = DiskWritePolicy.parse(writePolicy);
        } catch (IllegalArgumentException e) {
            throw new BadInputException("--remote-write-policy must be through or on-evict, got '" + writePolicy + "'");
        }
        long inFlight = Checks.atLeast(Sizes.parseBytes(maxInFlight, "--remote-max-in-flight"), 1, "--remote-max-in-flight");
        long valueLimit = Checks.atLeast(Sizes.parseBytes(maxValue, "--remote-max-value"), 1, "--remote-max-value");
        RemoteSettings settings;
        String password = password();
        try {
            settings = new RemoteSettings(urls, mode.equals("cluster"), tenant, password,
                    Duration.ofMillis(timeoutMillis), Duration.ofMillis((long) (ttl * 1000)), valueLimit, 3,
                    Duration.ofMillis(breakerOpenMillis), caFile());
        } catch (IllegalArgumentException e) {
            throw new BadInputException(e.getMessage());
        }
        String tenantProblem = io.kvtier.tier.remote.RemoteKeys.tenantProblem(tenant);
        if (tenantProblem != null) {
            throw new BadInputException("--remote-tenant " + tenantProblem);
        }
        // A server that wants a password the user did not give: say where one goes (a new user's trial).
        String hint = password != null ? "" : " (no password was given: --remote-password-file FILE or " + PASSWORD_ENV + ")";
        return new OffloadSetup.RemoteSetup(settings, policy, admitAfter, inFlight, line -> System.err.println("kvtier: " + line
                + (line.startsWith("remote tier off: authentication failed") ? hint : "")));
    }

    private Path caFile() {
        if (caFile != null && !Files.isReadable(caFile)) {
            throw new BadInputException("--remote-ca-file " + caFile + ": no readable file there");
        }
        return caFile;
    }

    private String password() {
        return readPassword(passwordFile);
    }

    /**
     * The remote password: from {@code passwordFile} (stripped) when given, else from
     * {@value #PASSWORD_ENV}, else null. Shared with {@code bench offload --remote-password-file}.
     *
     * @throws BadInputException for a missing, empty or unreadable file
     */
    static String readPassword(Path passwordFile) {
        if (passwordFile != null) {
            Checks.exists(passwordFile, "--remote-password-file"); // was "cannot read it (/path)", naming no cause
            try {
                String p = Files.readString(passwordFile, StandardCharsets.UTF_8).strip();
                if (p.isEmpty()) {
                    throw new BadInputException("--remote-password-file " + passwordFile + " is empty");
                }
                return p;
            } catch (IOException e) {
                throw new BadInputException("--remote-password-file " + passwordFile + ": cannot read it (" + e.getMessage() + ")");
            }
        }
        String env = System.getenv(PASSWORD_ENV);
        return env == null || env.isEmpty() ? null : env;
    }

    /**
     * {@code offload} with these flags' remote tier behind its host tier; unchanged without
     * {@code --remote-url}.
     *
     * @throws BadInputException if a remote flag is wrong, or the host tier is off (the remote
     *         tier is fed from and read through host slots)
     */
    public OffloadSetup addTo(OffloadSetup offload) {
        OffloadSetup.RemoteSetup r = setup();
        if (r != null && !offload.enabled()) {
            throw new BadInputException("--remote-url needs the host tier: the remote tier sits behind it (--host-cache-bytes > 0)");
        }
        return offload.withRemote(r);
    }
}

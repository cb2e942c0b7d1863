package io.kvtier.cli;

import io.kvtier.engine.OffloadSetup;
import io.kvtier.offload.DiskWritePolicy;
import io.kvtier.tier.remote.RemoteSettings;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The remote tier (Redis / Valkey) behind the host tier: where the store is
 * ({@link RemoteConnectionOptions}: {@code --remote-url} and the flags of the connection) and
 * the tier's own flags, each refused without {@code --remote-url}. The password comes from
 * {@code --remote-password-file} or the environment variable
 * {@value RemoteConnectionOptions#PASSWORD_ENV}, never from the command line, and is never printed.
 */
public final class RemoteOptions {

    @Spec(Spec.Target.MIXEE)
    CommandSpec mixee;

    @Mixin
    RemoteConnectionOptions connection;

    @Option(names = "--remote-tenant", defaultValue = "default", paramLabel = "NAME",
            description = "key prefix of the engines that share chunks (kvt:v1:NAME:...; ACL key patterns isolate tenants; default ${DEFAULT-VALUE})")
    String tenant;

    @Option(names = "--remote-write-policy", defaultValue = "through", paramLabel = "through|on-evict",
            description = "through (default: after every host store) or on-evict (when the host tier evicts)")
    String writePolicy;

    @Option(names = "--remote-admit-after", defaultValue = "1", paramLabel = "N",
            description = "write a chunk to the remote tier only from its N-th use (default ${DEFAULT-VALUE})")
    int admitAfter;

    @Option(names = "--remote-ttl", defaultValue = "0", converter = TimeFlag.Seconds.class, paramLabel = "TIME",
            description = "expire stored chunks after this long, e.g. 3600s or 90s, at least 2s (a plain number is seconds; "
                    + "default ${DEFAULT-VALUE}: never; the server's eviction still applies)")
    Duration ttl;

    @Option(names = "--remote-timeout", defaultValue = "500ms", converter = TimeFlag.Millis.class, paramLabel = "TIME",
            description = "deadline of every remote operation, e.g. 500ms or 2s (a plain number is milliseconds; "
                    + "default ${DEFAULT-VALUE}); a late answer is a miss")
    Duration timeout;

    @Option(names = "--remote-max-in-flight", defaultValue = "64M", paramLabel = "SIZE",
            description = "bytes of chunks being written at once; writes beyond it are dropped and counted; at least one chunk's "
                    + "value (default ${DEFAULT-VALUE})")
    String maxInFlight;

    @Option(names = "--remote-max-value", defaultValue = "511M", paramLabel = "SIZE",
            description = "largest value sent; a larger chunk is not stored (default ${DEFAULT-VALUE}, lowered to the server's "
                    + "proto-max-bulk-len when CONFIG GET is allowed)")
    String maxValue;

    @Option(names = "--remote-breaker-open", defaultValue = "1s", converter = TimeFlag.Millis.class, paramLabel = "TIME",
            description = "after 3 failed operations a node is skipped (misses, dropped writes) for this long, then tried again; "
                    + "a node that answered no operation for this long gets a PING (a plain number is milliseconds; "
                    + "default ${DEFAULT-VALUE})")
    Duration breakerOpen;

    /** Most {@code --remote-timeout} and {@code --remote-breaker-open} take: a day. */
    static final Duration MOST_TIME = Duration.ofDays(1);

    /** Most {@code --remote-ttl} takes: a year. */
    static final Duration MOST_TTL = Duration.ofDays(365);

    /** Whether a remote tier was asked for. */
    public boolean enabled() {
        return connection.enabled();
    }

    /**
     * The remote tier, or null without {@code --remote-url}.
     *
     * @throws BadInputException for a bad value, an unreadable password file, or a remote flag without {@code --remote-url}
     */
    public OffloadSetup.RemoteSetup setup() {
        List<String> needUrl = new ArrayList<>(RemoteConnectionOptions.NEED_URL);
        needUrl.addAll(List.of("--remote-tenant", "--remote-write-policy", "--remote-admit-after", "--remote-ttl", "--remote-timeout",
                "--remote-max-in-flight", "--remote-max-value", "--remote-breaker-open"));
        Checks.needs(mixee, connection.enabled(), "--remote-url", needUrl.toArray(String[]::new));
        if (!connection.enabled()) {
            return null;
        }
        RemoteSettings base = connection.settings(tenant);
        Checks.atLeast(admitAfter, 1, "--remote-admit-after");
        // A day at most: Lettuce takes the connect timeout as an int of ms, and the breaker's period in ns
        // (a larger value was an internal error, not a refusal).
        TimeFlag.inRange(mixee, "--remote-timeout", timeout, Duration.ofMillis(1), MOST_TIME);
        TimeFlag.inRange(mixee, "--remote-breaker-open", breakerOpen, Duration.ZERO, MOST_TIME);
        // Not below the time the tier trusts a chunk it wrote is there: --remote-ttl 1ms (a new user's trial) expired every chunk
        // while the engine still counted it as stored, so its lookups "hit" nothing and its writes were skipped as done.
        TimeFlag.inRange(mixee, "--remote-ttl", ttl, "no expiry", OffloadSetup.REMOTE_HINT_TTL, MOST_TTL);
        DiskWritePolicy policy;
        try {
            policy = DiskWritePolicy.parse(writePolicy);
        } catch (IllegalArgumentException e) {
            throw new BadInputException("--remote-write-policy must be through or on-evict, got '" + writePolicy + "'");
        }
        long inFlight = Checks.atLeast(Sizes.parseBytes(maxInFlight, "--remote-max-in-flight"), 1, "--remote-max-in-flight");
        long valueLimit = Checks.atLeast(Sizes.parseBytes(maxValue, "--remote-max-value"), 1, "--remote-max-value");
        RemoteSettings settings = new RemoteSettings(base.urls(), base.cluster(), tenant, base.password(),
                timeout, ttl, valueLimit, 3, breakerOpen, base.caFile());
        String tenantProblem = io.kvtier.tier.remote.RemoteKeys.tenantProblem(tenant);
        if (tenantProblem != null) {
            throw new BadInputException("--remote-tenant " + tenantProblem);
        }
        // A refusal of the credentials says what to do about what was given: where a password goes when the server
        // wants one and none was given (a new user's trial), that the one given was refused.
        return new OffloadSetup.RemoteSetup(settings, policy, admitAfter, inFlight,
                line -> System.err.println("kvtier: " + connection.fitted(line)));
    }

    /**
     * {@code offload} with these flags' remote tier behind its host tier; unchanged without
     * {@code --remote-url}. {@link OffloadOptions#setup} has refused {@code --remote-url} without the
     * host tier (the remote tier is fed from and read through host slots).
     *
     * @throws BadInputException if a remote flag is wrong
     */
    public OffloadSetup addTo(OffloadSetup offload) {
        return offload.withRemote(setup());
    }
}

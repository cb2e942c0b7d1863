package io.kvtier.cli;

import io.kvtier.tier.remote.RemoteSettings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Option;

/**
 * Where the remote store (Redis / Valkey) is and how to reach it: {@code --remote-url}
 * (repeatable, cluster seeds), {@code --remote-mode}, {@code --remote-password-file},
 * {@code --remote-ca-file}. One mixin for every command that talks to a store: the remote tier of
 * {@code generate} and {@code serve} ({@link RemoteOptions} holds it) and {@code bench offload}'s
 * remote figures, so a URL, a mode or a password means the same to each (a new user's trial:
 * {@code bench offload} took one URL and no mode where the README promised cluster seeds).
 */
public final class RemoteConnectionOptions {

    /** Environment variable holding the remote password when no file is given. */
    public static final String PASSWORD_ENV = "KVTIER_REMOTE_PASSWORD";

    /** The flags of this mixin that need {@code --remote-url}. */
    static final List<String> NEED_URL = List.of("--remote-mode", "--remote-password-file", "--remote-ca-file");

    @Option(names = "--remote-url", paramLabel = "URL",
            description = "a remote KV store (Redis or Valkey): redis://[user@]host:port, or rediss:// for TLS; repeat for "
                    + "cluster seeds. No password in the URL: see --remote-password-file")
    List<String> urls = new ArrayList<>();

    @Option(names = "--remote-mode", defaultValue = "standalone", paramLabel = "standalone|cluster",
            description = "one server (default) or a Redis/Valkey Cluster")
    String mode;

    @Option(names = "--remote-password-file", paramLabel = "FILE",
            description = "file holding the password of the URL's user (or of 'default'); without it, the environment variable "
                    + PASSWORD_ENV + " if set")
    Path passwordFile;

    @Option(names = "--remote-ca-file", paramLabel = "FILE",
            description = "PEM file of the CA certificate(s) that signed the rediss:// server's certificate "
                    + "(default: the JVM's trusted CAs)")
    Path caFile;

    /** Whether a store was given. */
    public boolean enabled() {
        return !urls.isEmpty();
    }

    /**
     * The store's settings under {@code tenant}, with {@link RemoteSettings#of}'s defaults for
     * what these flags do not say (timeout, TTL, value limit, breaker).
     *
     * @throws BadInputException for a bad mode or URL, an unreadable password or CA file
     */
    RemoteSettings settings(String tenant) {
        if (!mode.equals("standalone") && !mode.equals("cluster")) {
            throw new BadInputException("--remote-mode must be standalone or cluster, got '" + mode + "'");
        }
        if (caFile != null && !Files.isReadable(caFile)) {
            throw new BadInputException("--remote-ca-file " + caFile + ": no readable file there");
        }
        String password = readPassword(passwordFile);
        try {
            return RemoteSettings.of(urls, mode.equals("cluster"), tenant, password).withCaFile(caFile);
        } catch (IllegalArgumentException e) {
            throw new BadInputException(e.getMessage());
        }
    }

    /**
     * Where the password came from, as a line names it: {@code --remote-password-file FILE}, or
     * {@value #PASSWORD_ENV}; null when none was given.
     */
    String passwordSource() {
        if (passwordFile != null) {
            return "--remote-password-file " + passwordFile;
        }
        return System.getenv(PASSWORD_ENV) == null ? null : PASSWORD_ENV;
    }

    /** Whether one of {@code urls} names a user but {@code default} ({@code redis://user@host:port}); else the server's user is {@code default}. */
    static boolean namesUser(List<String> urls) {
        return urls.stream().anyMatch(io.kvtier.tier.remote.RemoteSettings::namesUser);
    }

    /** {@link #fitted(String, String, boolean)} for these flags' password and URLs. */
    String fitted(String reason) {
        return fitted(reason, passwordSource(), namesUser(urls));
    }

    /** The words the tier ends a refusal of its credentials with ({@code RemoteErrors.authFailed}), whatever was given. */
    private static final String GENERIC_ADVICE = "): check the remote user and password";

    /**
     * {@code reason} (a remote tier's reason for turning off) with the advice after a refusal of its
     * credentials fitted to what was given; any other reason unchanged.
     *
     * @param passwordSource {@link #passwordSource()}: null when no password was given
     * @param namedUser      whether the URL names a user ({@code redis://user@...}); else the user is {@code default}
     */
    static String fitted(String reason, String passwordSource, boolean namedUser) {
        String start = "authentication failed (";
        int at = reason.indexOf(start);
        if (at < 0 || !reason.endsWith(GENERIC_ADVICE)) {
            return reason;
        }
        String advice = authAdvice(reason.substring(at + start.length(), reason.length() - GENERIC_ADVICE.length()),
                passwordSource, namedUser);
        return advice == null ? reason : reason.substring(0, reason.length() - GENERIC_ADVICE.length()) + "): " + advice;
    }

    /**
     * What to do about a server's refusal of the client's credentials ({@code serverLine}: its
     * reply), fitted to what was given: a server that wants a password when none was given
     * (NOAUTH), a password it refused (WRONGPASS), a password given to a server that has none.
     * Never advice about a password where none was given and none was asked for: null for any
     * other reply.
     */
    static String authAdvice(String serverLine, String passwordSource, boolean namedUser) {
        String user = namedUser ? "the URL's user" : "user default";
        if (io.kvtier.tier.remote.RemoteErrors.isUnwantedPassword(serverLine)) {
            // AUTH <password> (redis-benchmark's, the tier's check) to a server with no password, Redis 6+ or older;
            // a client that names the user passes.
            return passwordSource == null ? null : "the server has no password for " + user + ": "
                    + (passwordSource.startsWith("--") ? "leave out " : "unset ") + passwordSource;
        }
        if (serverLine.contains("NOAUTH") || serverLine.contains("Authentication required")) {
            return passwordSource == null
                    ? "the server wants a password: give it with --remote-password-file FILE (or " + PASSWORD_ENV + ")"
                    : "the server did not take the password of " + passwordSource + " for " + user;
        }
        if (serverLine.contains("WRONGPASS") || serverLine.contains("invalid username-password")) {
            return passwordSource == null ? null
                    : "the server refused the password of " + passwordSource + " for " + user + " (a wrong password, or a user"
                            + " that is disabled or not there)";
        }
        return null;
    }

    /**
     * The remote password: from {@code passwordFile} (its trailing line ends removed) when given,
     * else from {@value #PASSWORD_ENV}, else null.
     *
     * @throws BadInputException for a missing, empty or unreadable file
     */
    static String readPassword(Path passwordFile) {
        if (passwordFile != null) {
            String p = passwordInFile(Checks.secretFile(passwordFile, "--remote-password-file"));
            if (p.isBlank()) {
                throw new BadInputException("--remote-password-file " + passwordFile + " is empty");
            }
            return p;
        }
        return passwordFromEnv(System.getenv(PASSWORD_ENV));
    }

    /**
     * The password a file of {@code contents} holds: all but its trailing line ends ({@code echo pw > f}
     * writes one). Spaces are kept, as in the variable: stripping them sent {@code " pw"} as {@code "pw"}
     * and the server refused a password the file held (trial28).
     */
    static String passwordInFile(String contents) {
        int end = contents.length();
        while (end > 0 && (contents.charAt(end - 1) == '\n' || contents.charAt(end - 1) == '\r')) {
            end--;
        }
        return contents.substring(0, end);
    }

    /**
     * The password in {@value #PASSWORD_ENV} ({@code value}; null when unset). Set but empty (or
     * blank) is refused, as an empty {@code --remote-password-file} is: it would silently mean no
     * password, and the tier would turn off at the server's NOAUTH (a new user's trial).
     */
    static String passwordFromEnv(String value) {
        if (value != null && value.isBlank()) {
            throw new BadInputException(PASSWORD_ENV + " is set but empty: give the password in it, or unset it for none");
        }
        return value;
    }
}

package io.kvtier.cli;

import io.kvtier.tier.remote.RemoteSettings;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
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
     * The remote password: from {@code passwordFile} (stripped) when given, else from
     * {@value #PASSWORD_ENV}, else null.
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
}

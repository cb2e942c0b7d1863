package io.kvtier.tier.remote;

/**
 * The words of a remote failure: a connection's cause without Lettuce's wrappers, whether it is
 * an authentication or TLS failure, and the hint a mistyped scheme deserves. Stateless. Public for
 * {@link #isUnwantedPassword}, which the CLI's advice reads too.
 */
public final class RemoteErrors {

    private RemoteErrors() {
    }

    /**
     * A hint after "cannot reach": a TLS server resets a plain-text connection, which would
     * otherwise read as a store that is down for good.
     */
    static String tlsHint(RemoteSettings settings, String reason) {
        return reason != null && reason.contains("connection reset") && settings.urls().stream().anyMatch(u -> u.startsWith("redis://"))
                ? " (a TLS port? use rediss://)" : "";
    }

    /** The message of the TLS failure in {@code t}'s causes, or null if none. */
    static String tlsFailure(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            // NotSslRecordException: the server answered in plain text (no TLS on that port).
            if (c instanceof javax.net.ssl.SSLException || c instanceof io.netty.handler.ssl.NotSslRecordException) {
                String m = c.getMessage() == null ? c.getClass().getSimpleName() : c.getMessage();
                int nl = m.indexOf('\n');
                return nl >= 0 ? m.substring(0, nl) : m;
            }
        }
        return null;
    }

    /**
     * Why a connection failed, in the words of its root cause and without the address (the
     * message around it names the URL): {@code connection refused}, {@code connection timed out},
     * {@code nosuchhost: Name or service not known}. Lettuce's own wrappers repeat the cause and
     * print the address as {@code 127.0.0.1/<unresolved>:6379}; a cluster's "cannot retrieve the
     * partitions" keeps each seed's failure as a suppressed exception.
     */
    static String reasonOf(Throwable t) {
        Throwable root = t;
        for (int depth = 0; depth < 32; depth++) {
            Throwable next = root.getCause() != null && root.getCause() != root ? root.getCause()
                    : root.getSuppressed().length > 0 ? root.getSuppressed()[0] : null;
            if (next == null) {
                break;
            }
            root = next;
        }
        String m = root.getMessage() == null ? root.getClass().getSimpleName() : firstLine(root.getMessage());
        String notResp = notResp(m);
        if (notResp != null) {
            return notResp;
        }
        if (m.contains("RedisHandshakeHandler not registered")) {
            // Lettuce's words when the connection was closed before its handshake could start or
            // report (the server hung up at once, its reason lost): say that, not Lettuce's internals.
            return CLOSED_IN_HANDSHAKE;
        }
        int address = m.indexOf(": /"); // netty's "Connection refused: /127.0.0.1:6379"
        String reason = address > 0 ? m.substring(0, address) : m;
        // The JDK's socket errors are capitalised ("Connection refused", "Connection reset"): lower
        // case as the lines' own words ("connection refused") so one cause reads the same everywhere.
        return reason.startsWith("Connection ") ? "c" + reason.substring(1) : reason;
    }

    /** A server that closed the connection before the handshake (Lettuce says "RedisHandshakeHandler not registered"). */
    static final String CLOSED_IN_HANDSHAKE = "the server closed the connection during the handshake: is the port a Redis or"
            + " Valkey server's?";

    /** Lettuce's decoder on a reply that is not RESP: {@code Invalid first byte: 60 (<) at buffer index 1 decoding using null}. */
    private static final java.util.regex.Pattern INVALID_FIRST_BYTE = java.util.regex.Pattern.compile("Invalid first byte: (\\d+)");

    /**
     * The reason for a server that answered in another protocol (an HTTP server, a mistyped
     * port), naming the reply's first character, or null for any other message: Lettuce's own
     * words name its decoder's internals (a new user's trial).
     */
    static String notResp(String message) {
        java.util.regex.Matcher m = INVALID_FIRST_BYTE.matcher(message);
        if (!m.find()) {
            return null;
        }
        int b = Integer.parseInt(m.group(1));
        String first = b > 32 && b < 127 ? "'" + (char) b + "'" : "byte " + b;
        return "its reply is not the Redis protocol, it began with " + first + ": is the port a Redis or Valkey server's?";
    }

    /**
     * Whether an error (its {@link #messageOf} text) refuses this user for good, so the tier turns
     * off rather than retrying: bad credentials ({@code WRONGPASS}, {@code NOAUTH}, and two
     * wordings matched since the first version, {@code invalid username-password} and
     * {@code AUTH failed}), a password the server has no use for ({@link #isUnwantedPassword}), or
     * an ACL refusal ({@code NOPERM}). The one check, at connection and on commands.
     */
    static boolean isAuthError(String msg) {
        return msg.contains("WRONGPASS") || msg.contains("NOAUTH") || msg.contains("invalid username-password")
                || msg.contains("AUTH failed") || msg.contains("NOPERM") || isUnwantedPassword(msg);
    }

    /**
     * Whether a server refused {@code AUTH <password>} as it has no password for user default
     * (Redis 6 and later, Valkey: "called without any password configured"; before ACLs: "no
     * password is set"): credentials that do not fit the server, as a wrong password does.
     */
    public static boolean isUnwantedPassword(String msg) {
        return msg.contains("without any password configured") || msg.contains("no password is set");
    }

    /** The reason a tier turns off for bad credentials: the server's first line, never a password. */
    static String authFailed(String msg) {
        return "authentication failed (" + firstLine(msg) + "): check the remote user and password";
    }

    /**
     * Why a failed connection turns the tier off for good, or null if retrying may succeed (the
     * store down or unreachable): bad credentials, or a store that answered as one that will
     * never serve these settings (no such database, not a cluster, a TLS mismatch).
     * {@code msg} is {@link #messageOf} {@code err}, {@code reason} its {@link #reasonOf}.
     */
    static String connectRefusal(RemoteSettings settings, Throwable err, String msg, String reason) {
        String url = RemoteSettings.redact(settings.urls().get(0));
        if (isAuthError(msg)) {
            return authFailed(msg);
        } else if ((msg + reason).contains("DB index is out of range")) {
            // The store answered: it has no database of the URL's number, and never will.
            return url + " has no such database (" + firstLine(reason) + "): check the number after the port";
        } else if (settings.cluster() && (msg + reason).contains("cluster support disabled")) {
            // The store answered: it is standalone, and will never answer as a cluster.
            return url + " is not a cluster node (" + firstLine(reason) + "): leave out --remote-mode cluster";
        } else if (tlsFailure(err) != null) {
            // A certificate or protocol mismatch does not heal by retrying.
            return "TLS handshake with " + url + " failed (" + tlsFailure(err) + "): check that the server speaks TLS on that port and "
                    + (settings.caFile() == null ? "give the CA that signed its certificate with --remote-ca-file"
                    : "that --remote-ca-file " + settings.caFile() + " signed its certificate");
        }
        return null;
    }

    static String messageOf(Throwable t) {
        StringBuilder sb = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof java.util.concurrent.CompletionException && c.getCause() != null) {
                continue; // its message repeats its cause's
            }
            sb.append(sb.isEmpty() ? "" : " / ").append(c.getMessage() != null ? c.getMessage() : c.getClass().getSimpleName());
        }
        return sb.toString();
    }

    /**
     * Why an error reply to a command on {@code key} turns the tier off for good, or null: a
     * MOVED or ASK in standalone mode (the URL names a cluster node: about two in three keys
     * would fail; {@code standaloneUrl} is null in cluster mode), or a refusal of the user
     * ({@link #isAuthError}, the check made at connection too: on a command, mostly an ACL that
     * refuses the key).
     */
    static String refusal(String standaloneUrl, String key, String msg) {
        if (standaloneUrl != null && (msg.contains("MOVED") || msg.contains("ASK "))) {
            return RemoteSettings.redact(standaloneUrl) + " is a cluster node (" + firstLine(msg)
                    + "): give --remote-mode cluster";
        }
        if (!isAuthError(msg)) {
            return null;
        }
        return msg.contains("NOPERM")
                ? "the server refused key " + key + " (" + firstLine(msg) + "): give this user access to ~"
                        + key.substring(0, key.lastIndexOf(':') + 1) + "*"
                : authFailed(msg);
    }

    /**
     * The line about a store that refuses writes with OOM ({@code where}: the URL or node). Both
     * policies can say OOM: noeviction when full, an evicting one when a value is larger than
     * what it can free (a new user's server with allkeys-lru and a small maxmemory), so the line
     * names both rather than advising a policy the store may already have.
     */
    static String storeFull(String where, String msg) {
        return "remote tier: " + where + " is full and refuses writes (" + firstLine(msg) + "); writes fail until it has room,"
                + " lookups and loads go on (under maxmemory-policy noeviction a full store refuses every write; one that"
                + " evicts, such as allkeys-lru, refuses only values too large for its maxmemory)";
    }

    static String firstLine(String msg) {
        String s = msg;
        for (String part : msg.split(" / ")) {
            if (isAuthError(part)) {
                s = part;
                break;
            }
        }
        int nl = s.indexOf('\n');
        return (nl >= 0 ? s.substring(0, nl) : s).trim();
    }
}

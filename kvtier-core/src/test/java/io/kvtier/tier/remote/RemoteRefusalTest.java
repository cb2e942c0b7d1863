package io.kvtier.tier.remote;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The replies that turn the remote tier off for good ({@link RemoteErrors#isAuthError}, one
 * check at connection and on commands), on real servers where a server gives them: a wrong
 * password, no password where one is required, an ACL that refuses the tier's keys. Each is one
 * line, no secret, state {@code off}, and no breaker opening; another error reply leaves it on.
 */
class RemoteRefusalTest {

    @TempDir
    Path dir;

    private final List<String> warnings = new CopyOnWriteArrayList<>();

    private LettuceRemoteStore open(String url, String password) {
        return LettuceRemoteStore.open(RemoteSettings.of(List.of(url), false, "t", password)
                .withTimeout(Duration.ofSeconds(10)), warnings::add);
    }

    private static Throwable failure(java.util.concurrent.CompletableFuture<?> f) {
        Throwable t = catchThrowable(f::get);
        assertThat(t).as("the operation failed").isInstanceOf(ExecutionException.class);
        return t.getCause();
    }

    /** The tier is off for {@code reason} (the line after "remote tier off: "), said once, with no opening counted. */
    private void assertOff(LettuceRemoteStore s, String reasonStart) {
        assertThat(s.breakerState()).isEqualTo("off");
        assertThat(s.offReason()).startsWith(reasonStart);
        assertThat(s.breakerOpens()).as("turning off is no breaker opening").isZero();
        assertThat(s.allows("kvt:v1:t:k")).isFalse();
        assertThat(warnings).containsExactly("remote tier off: " + s.offReason());
    }

    @Test
    void aWrongPasswordTurnsTheTierOffAtConnection() throws Exception {
        try (OwnRedis r = OwnRedis.start(dir.resolve("r"), "requirepass right-secret");
             LettuceRemoteStore s = open(r.url(), "wrong-secret")) {
            assertOff(s, "authentication failed (WRONGPASS ");
            assertThat(s.offReason()).endsWith("): check the remote user and password").doesNotContain("secret");
            assertThat(failure(s.get("kvt:v1:t:k"))).isInstanceOf(RemoteFailure.class).hasMessage("remote tier off");
        }
    }

    /**
     * A new user's trial: a password for user default given to a server that has none passed the
     * handshake ({@code AUTH default <password>}: a user without a password takes any) where
     * redis-benchmark's {@code AUTH <password>} is refused. The store sends that AUTH too and turns
     * off at connection, before anything is written.
     */
    @Test
    void aPasswordForAServerWithoutOneTurnsTheTierOffAtConnection() throws Exception {
        try (OwnRedis r = OwnRedis.start(dir.resolve("r"));
             LettuceRemoteStore s = open(r.url(), "needless-secret")) {
            assertOff(s, "authentication failed (ERR AUTH <password> called without any password configured for the default user.");
            assertThat(s.offReason()).endsWith("): check the remote user and password").doesNotContain("needless-secret");
            assertThat(failure(s.set("kvt:v1:t:k", new byte[] {1}))).isInstanceOf(RemoteFailure.class).hasMessage("remote tier off");
            assertThat(r.cli("DBSIZE")).isEqualTo("0");
        }
    }

    /** A new user's trial: {@code default@} in the URL is the user of no URL user, and its needless password is refused alike (it served). */
    @Test
    void aPasswordForTheNamedDefaultUserOfAServerWithoutOneTurnsTheTierOff() throws Exception {
        try (OwnRedis r = OwnRedis.start(dir.resolve("r"));
             LettuceRemoteStore s = open("redis://default@127.0.0.1:" + r.port(), "needless-secret")) {
            assertOff(s, "authentication failed (ERR AUTH <password> called without any password configured for the default user.");
            assertThat(failure(s.set("kvt:v1:t:k", new byte[] {1}))).isInstanceOf(RemoteFailure.class).hasMessage("remote tier off");
            assertThat(r.cli("DBSIZE")).isEqualTo("0");
        }
    }

    /**
     * A URL that names its user sends {@code AUTH user <password>}, which a user without a password
     * takes (README: a {@code nopass} user accepts any password), and so does redis-benchmark's
     * {@code --user}: the tier serves. With the password right, a server that wants one serves too.
     */
    @Test
    void aNamedUserWithoutAPasswordAndARightPasswordServe() throws Exception {
        try (OwnRedis r = OwnRedis.start(dir.resolve("r"), "user bob on nopass ~kvt:* +@all", "requirepass right-secret");
             LettuceRemoteStore named = open("redis://bob@127.0.0.1:" + r.port(), "any-secret");
             LettuceRemoteStore right = open(r.url(), "right-secret")) {
            named.set("kvt:v1:t:a", new byte[] {1}).get();
            right.set("kvt:v1:t:b", new byte[] {2}).get();
            assertThat(named.breakerState()).isEqualTo("closed");
            assertThat(right.breakerState()).isEqualTo("closed");
            assertThat(warnings).isEmpty();
        }
    }

    /** trial11 F2: it said "cannot reach" and promised to use the store once it answers. */
    @Test
    void clusterModeAtAStandaloneServerTurnsTheTierOffNamingTheFlag() throws Exception {
        try (OwnRedis r = OwnRedis.start(dir.resolve("r"));
             LettuceRemoteStore s = LettuceRemoteStore.open(RemoteSettings.of(List.of(r.url()), true, "t", null)
                     .withTimeout(Duration.ofSeconds(10)), warnings::add)) {
            assertOff(s, r.url() + " is not a cluster node (");
            assertThat(s.offReason()).contains("cluster support disabled").endsWith("): leave out --remote-mode cluster");
        }
    }

    /**
     * trial19: a URL naming another kind of server (here a fake that answers every connection as
     * an HTTP server would) said Lettuce's decoder internals ("Invalid first byte: 72 (H) at buffer
     * index 1 decoding using null"); the line names the reply's first character and asks about the port.
     */
    @Test
    void aServerThatIsNotRedisIsNamedAsSuch() throws Exception {
        try (java.net.ServerSocket http = new java.net.ServerSocket(0, 8, java.net.InetAddress.getLoopbackAddress())) {
            Thread answering = Thread.ofVirtual().start(() -> {
                while (!http.isClosed()) {
                    try (java.net.Socket c = http.accept()) {
                        byte[] in = new byte[512];
                        c.getInputStream().read(in);
                        c.getOutputStream().write("HTTP/1.1 400 Bad Request\r\n\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
                        c.getOutputStream().flush();
                        // Open until the client closes it: a server closing first races Lettuce's handshake (its
                        // own failure then reads "RedisHandshakeHandler not registered"; see RemoteErrors.reasonOf).
                        while (c.getInputStream().read(in) >= 0) {
                            // the client's further bytes, if any
                        }
                    } catch (java.io.IOException closed) {
                        return;
                    }
                }
            });
            String url = "redis://127.0.0.1:" + http.getLocalPort();
            try (LettuceRemoteStore s = open(url, null)) {
                assertThat(warnings).containsExactly("remote tier: cannot reach " + url + " (its reply is not the Redis protocol,"
                        + " it began with 'H': is the port a Redis or Valkey server's?); every lookup misses until it answers");
                assertThat(s.breakerState()).isEqualTo("open");
            } finally {
                http.close();
                answering.join(5_000);
            }
        }
        assertThat(RemoteErrors.notResp("Invalid first byte: 10 (\n) at buffer index 1")).contains(", it began with byte 10:");
        assertThat(RemoteErrors.notResp("Connection refused")).isNull();
        assertThat(RemoteErrors.reasonOf(new java.util.concurrent.CompletionException(
                new IllegalStateException("RedisHandshakeHandler not registered"))))
                .isEqualTo("the server closed the connection during the handshake: is the port a Redis or Valkey server's?");
    }

    /** trial17 F2: a database the server does not have said "cannot reach ... until it answers". */
    @Test
    void aDatabaseTheServerDoesNotHaveTurnsTheTierOff() throws Exception {
        try (OwnRedis r = OwnRedis.start(dir.resolve("r"));
             LettuceRemoteStore s = LettuceRemoteStore.open(RemoteSettings.of(List.of(r.url() + "/99"), false, "t", null)
                     .withTimeout(Duration.ofSeconds(10)), warnings::add)) {
            assertOff(s, r.url() + "/99 has no such database (");
            assertThat(s.offReason()).contains("DB index is out of range").endsWith("): check the number after the port");
        }
    }

    @Test
    void noPasswordWhereOneIsRequiredTurnsTheTierOff() throws Exception {
        try (OwnRedis r = OwnRedis.start(dir.resolve("r"), "requirepass right-secret");
             LettuceRemoteStore s = open(r.url(), null)) {
            // Refused at the handshake or at the first command, as the client's protocol goes.
            for (int i = 0; i < 4 && !s.breakerState().equals("off"); i++) {
                s.set("kvt:v1:t:" + i, new byte[] {1}).exceptionally(e -> null).get();
            }
            assertThat(s.offReason()).contains("NOAUTH");
            assertOff(s, "authentication failed (NOAUTH ");
        }
    }

    @Test
    void anAclThatRefusesTheKeysTurnsTheTierOffAtTheFirstCommand() throws Exception {
        try (OwnRedis r = OwnRedis.start(dir.resolve("r"), "user alice on >alice-pw ~other:* +@all");
             LettuceRemoteStore s = open("redis://alice@127.0.0.1:" + r.port(), "alice-pw")) {
            assertThat(s.breakerState()).isEqualTo("closed");
            assertThat(failure(s.set("kvt:v1:t:ns:k1", new byte[] {1}))).isInstanceOf(RemoteFailure.class);
            assertOff(s, "the server refused key kvt:v1:t:ns:k1 (NOPERM ");
            assertThat(s.offReason()).endsWith("): give this user access to ~kvt:v1:t:ns:*").doesNotContain("alice-pw");
        }
    }

    /**
     * trial17 F3: a full store that does not evict (noeviction) refuses every SET with OOM but still
     * serves GETs; it was reported as "stopped answering" and its breaker opened, so loads missed
     * too. Now the refusals fail their writes alone, the breaker stays closed, one line says why.
     */
    @Test
    void aFullStoreRefusesWritesButStillServesReads() throws Exception {
        try (OwnRedis r = OwnRedis.start(dir.resolve("r"), "maxmemory-policy noeviction");
             LettuceRemoteStore s = open(r.url(), null)) {
            s.set("kvt:v1:t:ns:kept", new byte[] {7}).get();
            r.cli("config", "set", "maxmemory", "1");
            for (int i = 0; i < 5; i++) {
                Throwable t = failure(s.set("kvt:v1:t:ns:k" + i, new byte[] {1}));
                assertThat(RemoteFailure.causeOf(t)).isEqualTo(RemoteFailure.Cause.ERROR);
                assertThat(t).hasMessageContaining("OOM");
            }
            assertThat(s.breakerState()).isEqualTo("closed");
            assertThat(s.get("kvt:v1:t:ns:kept").get()).containsExactly(7);
            assertThat(warnings).hasSize(1);
            assertThat(warnings.getFirst()).startsWith("remote tier: " + r.url() + " is full and refuses writes (OOM ")
                    .endsWith("writes fail until it has room, lookups and loads go on (under maxmemory-policy noeviction a full"
                            + " store refuses every write; one that evicts, such as allkeys-lru, refuses only values too large for its"
                            + " maxmemory)");
        }
    }

    @Test
    void anotherErrorReplyLeavesTheTierOn() throws Exception {
        try (OwnRedis r = OwnRedis.start(dir.resolve("r"));
             LettuceRemoteStore s = open(r.url(), null)) {
            r.cli("rpush", "a-list", "x");
            assertThat(RemoteFailure.causeOf(failure(s.get("a-list")))).isEqualTo(RemoteFailure.Cause.ERROR); // WRONGTYPE
            assertThat(s.breakerState()).isEqualTo("closed");
            assertThat(s.offReason()).isNull();
            assertThat(warnings).isEmpty();
        }
    }

    @Test
    void theOneCheckMatchesTheRefusalsAndNothingElse() {
        assertThat(List.of("WRONGPASS invalid username-password pair or user is disabled.",
                "NOAUTH Authentication required.",
                "NOPERM this user has no permissions to access one of the keys used as arguments",
                "ERR invalid username-password pair", "ERR AUTH failed: bad password",
                "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?",
                "ERR Client sent AUTH, but no password is set",
                "io.lettuce.core.RedisConnectionException: Unable to connect / NOAUTH HELLO must be called with the client already authenticated"))
                .allMatch(RemoteErrors::isAuthError);
        assertThat(List.of("WRONGTYPE Operation against a key holding the wrong kind of value",
                "OOM command not allowed when used memory > 'maxmemory'.", "ERR unknown command 'TOUCH'",
                "MOVED 3999 127.0.0.1:6381", "LOADING Redis is loading the dataset in memory", "Connection refused"))
                .noneMatch(RemoteErrors::isAuthError);
    }
}

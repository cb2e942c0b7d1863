package io.kvtier.tier.remote;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisLoadingException;
import io.lettuce.core.protocol.RedisProtocolException;
import java.net.SocketException;
import java.nio.channels.ClosedChannelException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A failed remote operation is counted by its whole kind: a connection closed under a command (a
 * killed server) or refused is {@code unavailable}, no answer in time is {@code timeout}, an error
 * reply is {@code error}; first on real servers, then over the exception types Lettuce raises.
 */
class RemoteFailureTest {

    @TempDir
    Path dir;

    private static RemoteFailure.Cause failureOf(CompletableFuture<?> f) {
        Throwable t = catchThrowable(f::get);
        assertThat(t).as("the operation failed").isInstanceOf(ExecutionException.class);
        assertThat(t.getCause()).isInstanceOf(RemoteFailure.class);
        return RemoteFailure.causeOf(t);
    }

    private static LettuceRemoteStore open(OwnRedis r, Duration timeout) {
        return LettuceRemoteStore.open(RemoteSettings.of(List.of(r.url()), false, "t", null).withTimeout(timeout)
                .withBreakerOpen(Duration.ofSeconds(60)), line -> { });
    }

    /**
     * trial 10 #5: standalone mode pointed at a cluster node got MOVED for about two keys in
     * three, silently. The first MOVED turns the tier off with one line naming the flag.
     */
    @Test
    void aClusterNodeInStandaloneModeTurnsTheTierOffNamingTheFlag() throws Exception {
        List<String> warnings = new java.util.concurrent.CopyOnWriteArrayList<>();
        String node = RedisServers.cluster().get(0);
        try (LettuceRemoteStore s = LettuceRemoteStore.open(RemoteSettings.of(List.of(node), false, "t", null)
                .withTimeout(Duration.ofSeconds(10)), warnings::add)) {
            for (int i = 0; i < 64 && !s.breakerState().equals("off"); i++) {
                s.set("kvt:v1:moved:" + i, new byte[] {1}).exceptionally(e -> null).get();
            }
            assertThat(s.breakerState()).isEqualTo("off");
        }
        assertThat(warnings).hasSize(1);
        assertThat(warnings.get(0)).startsWith("remote tier off: " + node + " is a cluster node (MOVED ")
                .endsWith("): give --remote-mode cluster");
    }

    @Test
    void aServerKilledUnderACommandIsUnavailableNotAnError() throws Exception {
        try (OwnRedis r = OwnRedis.start(dir.resolve("r"))) {
            try (LettuceRemoteStore s = open(r, Duration.ofSeconds(30))) {
                s.set("k", new byte[] {1, 2, 3}).get();
                r.freeze(); // the GET below is sent and never answered ...
                CompletableFuture<byte[]> inFlight = s.get("k");
                Thread.sleep(100);
                r.kill(); // ... until the kernel closes the dead server's socket under it
                assertThat(failureOf(inFlight)).isEqualTo(RemoteFailure.Cause.UNAVAILABLE);
                // Commands after the close are refused by the disconnected client: unavailable too.
                assertThat(failureOf(s.get("k"))).isEqualTo(RemoteFailure.Cause.UNAVAILABLE);
                assertThat(failureOf(s.set("k", new byte[1]))).isEqualTo(RemoteFailure.Cause.UNAVAILABLE);
            }
        }
    }

    @Test
    void aFrozenServerIsATimeout() throws Exception {
        try (OwnRedis r = OwnRedis.start(dir.resolve("r"))) {
            try (LettuceRemoteStore s = open(r, Duration.ofMillis(300))) {
                s.set("k", new byte[] {1}).get();
                r.freeze();
                assertThat(failureOf(s.get("k"))).isEqualTo(RemoteFailure.Cause.TIMEOUT);
                r.thaw();
            }
        }
    }

    /**
     * A new user's trial: a store frozen during a run said nothing until the summary. The breaker's
     * opening is one line, once however long the outage (not once per trial period), and the first
     * success after it another.
     */
    @Test
    void aStoreThatStopsAnsweringIsSaidOnceAndItsReturnOnce() throws Exception {
        List<String> lines = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (OwnRedis r = OwnRedis.start(dir.resolve("r"));
             LettuceRemoteStore s = LettuceRemoteStore.open(RemoteSettings.of(List.of(r.url()), false, "t", null)
                     .withTimeout(Duration.ofMillis(200)).withBreakerOpen(Duration.ofMillis(50)), lines::add)) {
            s.set("k", new byte[] {1}).get();
            r.freeze();
            assertThat(failureOf(s.get("k"))).isEqualTo(RemoteFailure.Cause.TIMEOUT);
            // Its failures, and those of the store's own PINGs (no success for a period), open the breaker.
            assertThat(Await.until(s::breakerState, "open")).isEqualTo("open");
            Thread.sleep(500); // ten open periods: each trial times out and re-opens it, saying nothing
            assertThat(s.breakerOpens()).as("a failed trial is no new opening").isEqualTo(1);
            assertThat(lines).hasSize(1).first().asString().startsWith("remote tier: " + r.url() + " stopped answering (timeout: ")
                    .endsWith("); lookups miss and writes are dropped until it answers (tried again every 50 ms)");
            r.thaw();
            assertThat(Await.until(s::breakerState, "closed")).isEqualTo("closed");
            assertThat(s.get("k").get()).containsExactly(1);
            assertThat(Await.until(lines::size, 2)).as("its return said: %s", lines).isEqualTo(2);
            assertThat(lines.getLast()).isEqualTo("remote tier: " + r.url() + " answers again");
        }
    }

    @Test
    void anErrorReplyIsAnError() throws Exception {
        try (OwnRedis r = OwnRedis.start(dir.resolve("r"))) {
            r.cli("rpush", "a-list", "x");
            try (LettuceRemoteStore s = open(r, Duration.ofSeconds(30))) {
                assertThat(failureOf(s.get("a-list"))).isEqualTo(RemoteFailure.Cause.ERROR); // WRONGTYPE
                assertThat(s.get("absent").get()).isNull();
            }
        }
    }

    @Test
    void eachKindOfLettuceExceptionHasItsCause() {
        record Case(Throwable thrown, RemoteFailure.Cause cause) {
        }
        List<Case> cases = List.of(
                new Case(new RedisCommandTimeoutException("Command timed out after 500 ms"), RemoteFailure.Cause.TIMEOUT),
                new Case(new CompletionException(new RedisCommandTimeoutException("t")), RemoteFailure.Cause.TIMEOUT),
                new Case(new SocketException("Connection reset"), RemoteFailure.Cause.UNAVAILABLE),
                new Case(new CompletionException(new ClosedChannelException()), RemoteFailure.Cause.UNAVAILABLE),
                new Case(new RedisConnectionException("Unable to connect to 127.0.0.1:1"), RemoteFailure.Cause.UNAVAILABLE),
                new Case(new RedisException("Currently not connected. Commands are rejected."), RemoteFailure.Cause.UNAVAILABLE),
                new Case(new RedisException("Connection closed"), RemoteFailure.Cause.UNAVAILABLE),
                new Case(new RedisException("closed", new ClosedChannelException()), RemoteFailure.Cause.UNAVAILABLE),
                new Case(new RedisLoadingException("LOADING Redis is loading the dataset in memory"), RemoteFailure.Cause.UNAVAILABLE),
                new Case(new RedisCommandExecutionException("CLUSTERDOWN The cluster is down"), RemoteFailure.Cause.UNAVAILABLE),
                new Case(new RedisCommandExecutionException("TRYAGAIN Multiple keys request during rehashing of slot"),
                        RemoteFailure.Cause.UNAVAILABLE),
                new Case(new RedisCommandExecutionException("MASTERDOWN Link with MASTER is down"), RemoteFailure.Cause.UNAVAILABLE),
                new Case(new RedisCommandExecutionException("OOM command not allowed when used memory > 'maxmemory'."),
                        RemoteFailure.Cause.ERROR),
                new Case(new RedisCommandExecutionException("WRONGTYPE Operation against a key holding the wrong kind of value"),
                        RemoteFailure.Cause.ERROR),
                new Case(new RedisProtocolException("Invalid first byte"), RemoteFailure.Cause.ERROR),
                new Case(new IllegalStateException("a bug"), RemoteFailure.Cause.ERROR),
                new Case(new RemoteFailure(RemoteFailure.Cause.UNAVAILABLE, "breaker open"), RemoteFailure.Cause.UNAVAILABLE));
        for (Case c : cases) {
            assertThat(RemoteFailure.causeOf(c.thrown())).as("%s", c.thrown()).isEqualTo(c.cause());
        }
    }

    /** The server's own error replies (it answered: no breaker counts them), and nothing else. */
    @Test
    void onlyTheServersErrorRepliesAreErrorReplies() {
        assertThat(List.<Throwable>of(new RedisCommandExecutionException("OOM command not allowed when used memory > 'maxmemory'."),
                new CompletionException(new RedisCommandExecutionException("WRONGTYPE Operation against a key")),
                new java.util.concurrent.ExecutionException(new RedisCommandExecutionException("ERR something"))))
                .allMatch(RemoteFailure::isErrorReply);
        assertThat(List.<Throwable>of(new RedisCommandExecutionException("LOADING Redis is loading the dataset in memory"),
                new RedisCommandExecutionException("CLUSTERDOWN The cluster is down"),
                new CompletionException(new RedisCommandTimeoutException("t")), new SocketException("Connection reset"),
                new RedisProtocolException("Invalid first byte"), new IllegalStateException("a bug"),
                new RemoteFailure(RemoteFailure.Cause.ERROR, "OOM command not allowed")))
                .noneMatch(RemoteFailure::isErrorReply);
    }
}

package io.kvtier.tier.remote;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;

/** The words of a lost connection's reconnections (the killed server's case is BreakerTrialTest's, on a real server). */
class ReconnectReasonsTest {

    @Test
    void aRefusedReconnectionIsConnectionRefusedAnyOtherIsNamed() {
        assertThat(ReconnectReasons.words("connection refused")).isEqualTo("connection refused");
        assertThat(ReconnectReasons.words("connection timed out")).isEqualTo("not connected (connection timed out)");
    }

    /**
     * A command refused while the client connects is the JDK's "Connection refused": the line
     * says it in the words serve and a failed reconnection use (a new user's trial saw
     * "unavailable: Connection refused" from generate, "connection refused" from serve).
     */
    @Test
    void aRefusedConnectionReadsTheSameWhereverItComesFrom() {
        Throwable refused = new io.lettuce.core.RedisConnectionException("Unable to connect to 127.0.0.1/<unresolved>:6380",
                new java.net.ConnectException("Connection refused: /127.0.0.1:6380"));
        assertThat(RemoteErrors.reasonOf(refused)).isEqualTo("connection refused");
        io.lettuce.core.resource.ClientResources resources = LettuceResources.create();
        try (ReconnectReasons reasons = new ReconnectReasons(resources)) {
            assertThat(reasons.reasonOf("127.0.0.1:6380", refused, 1)).isCompletedWithValue("connection refused");
        } finally {
            resources.shutdown(0, 1, java.util.concurrent.TimeUnit.SECONDS);
        }
        assertThat(RemoteErrors.tlsHint(RemoteSettings.of(java.util.List.of("redis://127.0.0.1:6380"), false, null, null),
                RemoteErrors.reasonOf(new java.net.SocketException("Connection reset")))).isEqualTo(" (a TLS port? use rediss://)");
    }

    @Test
    void serversAreNamedHostColonPortAsTheStoreNamesThem() {
        assertThat(ReconnectReasons.address(InetSocketAddress.createUnresolved("127.0.0.1", 6379))).isEqualTo("127.0.0.1:6379");
        assertThat(ReconnectReasons.address(new InetSocketAddress("127.0.0.1", 7000))).isEqualTo("127.0.0.1:7000");
    }

    /** trial28: a line still waiting for a failed reconnection when the store closed came after close, or never. */
    @Test
    void closingAnswersTheLinesStillWaiting() {
        io.lettuce.core.resource.ClientResources resources = LettuceResources.create();
        try {
            java.util.concurrent.CompletableFuture<String> said;
            try (ReconnectReasons reasons = new ReconnectReasons(resources)) {
                said = reasons.reasonOf("127.0.0.1:6379",
                        new io.lettuce.core.RedisException("Currently not connected. Commands are rejected."), 60_000);
                assertThat(said).as("nothing to say yet").isNotDone();
            }
            assertThat(said).as("said by close, not a minute later").isCompletedWithValue("not connected");
        } finally {
            resources.shutdown(0, 1, java.util.concurrent.TimeUnit.SECONDS);
        }
    }

    /**
     * A line made before any reconnection failed waits for the first (the kill's PINGs can fail
     * within a millisecond of the loss), and says "not connected" when none comes in time.
     */
    @Test
    void aLineBeforeTheFirstFailedReconnectionWaitsForIt() throws Exception {
        io.lettuce.core.resource.ClientResources resources = LettuceResources.create();
        try (ReconnectReasons reasons = new ReconnectReasons(resources)) {
            Throwable down = new io.lettuce.core.RedisException("Currently not connected. Commands are rejected.");
            java.util.concurrent.CompletableFuture<String> said = reasons.reasonOf("127.0.0.1:6379", down, 60_000);
            assertThat(said).as("nothing to say yet").isNotDone();
            resources.eventBus().publish(new io.lettuce.core.event.connection.ReconnectFailedEvent(new InetSocketAddress(0),
                    InetSocketAddress.createUnresolved("127.0.0.1", 6379), new java.net.ConnectException("Connection refused"), 1));
            assertThat(said.get(30, java.util.concurrent.TimeUnit.SECONDS)).isEqualTo("connection refused");
            assertThat(reasons.reasonOf("127.0.0.1:6379", down, 60_000)).as("known now: at once").isCompletedWithValue("connection refused");
            assertThat(reasons.reasonOf("127.0.0.1:6380", down, 1).get(30, java.util.concurrent.TimeUnit.SECONDS))
                    .as("another server, no failure in time").isEqualTo("not connected");
            assertThat(reasons.reasonOf("127.0.0.1:6379", new io.lettuce.core.RedisCommandTimeoutException(
                    "Command timed out after 500 ms"), 1)).as("any other reason as it is").isCompletedWithValue("Command timed out after 500 ms");
        } finally {
            resources.shutdown(0, 1, java.util.concurrent.TimeUnit.SECONDS);
        }
    }
}

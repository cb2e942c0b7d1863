package io.kvtier.tier.remote;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An idle store watches its own breaker. A closed one that has seen no success for a period is
 * tried with a PING, so a server killed or frozen under an idle {@code serve} opens it and says
 * so without a request (it read {@code closed} until one came, and that one paid the timeouts).
 * When an open period ends the store tries it again, so it closes when the server is back (a
 * dashboard read an idle serve's half-open breaker, reported open, as a store still down).
 * Against a real redis-server killed and restarted, or frozen and thawed, with no operation
 * in between.
 */
class BreakerTrialTest {

    /** Long enough for a loaded machine's scheduling; the store tries itself every period. */
    private static final Duration PERIOD = Duration.ofMillis(100);

    @TempDir
    Path dir;

    private final List<String> lines = new CopyOnWriteArrayList<>();

    /** A store on {@code r} (timeout 500 ms, breaker open for {@code period}) that has set {@code k} to {1}. */
    private LettuceRemoteStore openHoldingK(OwnRedis r, Duration period) throws Exception {
        LettuceRemoteStore s = LettuceRemoteStore.open(RemoteSettings.of(List.of(r.url()), false, "t", null)
                .withTimeout(Duration.ofMillis(500)).withBreakerOpen(period), lines::add);
        s.set("k", new byte[] {1}).get();
        return s;
    }

    @Test
    void anIdleStoreSaysItsKilledServerStoppedAnsweringAndThatItIsBack() throws Exception {
        try (OwnRedis r = OwnRedis.start(dir.resolve("r")); LettuceRemoteStore s = openHoldingK(r, PERIOD)) {
            r.kill();
            // No operation: a period after the last success the store's PING finds the server gone
            // (refused at once while the client reconnects), three times in a row, and opens.
            assertThat(Await.until(s::breakerState, "open")).isEqualTo("open");
            assertThat(Await.until(lines::size, 1)).as("said once: %s", lines).isEqualTo(1);
            // Why in the line: the reconnections' refusal, not Lettuce's "Currently not connected. Commands are rejected."
            assertThat(lines).first().asString().startsWith("remote tier: " + r.url() + " stopped answering (unavailable:"
                    + " connection refused); ");
            assertThat(RemoteFailure.causeOf(catchThrowable(() -> s.get("k").get()))).isEqualTo(RemoteFailure.Cause.UNAVAILABLE);
            // Five periods down: each trial fails at once, which is no new opening and no new line.
            Thread.sleep(5 * PERIOD.toMillis());
            assertThat(s.breakerState()).isIn("open", "half_open");
            assertThat(s.breakerOpens()).isEqualTo(1);
            assertThat(lines).hasSize(1);

            r.restart(); // empty, on the same port
            assertThat(Await.until(s::breakerState, "closed")).as("closed with no operation sent").isEqualTo("closed");
            assertThat(Await.until(lines::size, 2)).as("its return said: %s", lines).isEqualTo(2);
            assertThat(lines).last().isEqualTo("remote tier: " + r.url() + " answers again");
            assertThat(r.cli("info", "commandstats")).as("the store's own PING closed it, no operation")
                    .contains("cmdstat_ping:").doesNotContain("cmdstat_get:", "cmdstat_set:", "cmdstat_touch:");
            assertThat(s.breakerOpens()).isEqualTo(1);
            assertThat(s.get("k").get()).as("a restarted server is empty").isNull();
        }
    }

    /**
     * A frozen server keeps its TCP connection: only the store's PING, unanswered, shows it. Once
     * the breaker is open an operation is refused without being sent, so it pays no timeout; at
     * the period's end the store's trial is out for a whole timeout (half-open), and the thaw
     * closes it. A period of a second, so that the operation comes well inside it on a loaded machine.
     */
    @Test
    void anIdleStoreSaysItsFrozenServerStoppedAnsweringAndTheThawClosesIt() throws Exception {
        try (OwnRedis r = OwnRedis.start(dir.resolve("r")); LettuceRemoteStore s = openHoldingK(r, Duration.ofSeconds(1))) {
            r.freeze();
            assertThat(Await.until(s::breakerState, "open")).isEqualTo("open");
            assertThat(Await.until(lines::size, 1)).as("said once: %s", lines).isEqualTo(1);
            assertThat(lines).first().asString().startsWith("remote tier: " + r.url() + " stopped answering (timeout: ");
            Throwable refused = catchThrowable(() -> s.get("k").get());
            assertThat(RemoteFailure.causeOf(refused)).isEqualTo(RemoteFailure.Cause.UNAVAILABLE);
            assertThat(refused).as("refused, not sent").hasRootCauseMessage("the node's breaker is open");
            assertThat(Await.until(s::breakerState, "half_open")).isEqualTo("half_open");
            assertThat(Await.until(s::breakerState, "open")).as("the trial timed out").isEqualTo("open");
            assertThat(s.breakerOpens()).isEqualTo(1);
            assertThat(lines).hasSize(1);
            r.thaw();
            assertThat(Await.until(s::breakerState, "closed")).isEqualTo("closed");
            assertThat(Await.until(lines::size, 2)).as("its return said: %s", lines).isEqualTo(2);
            assertThat(lines).last().isEqualTo("remote tier: " + r.url() + " answers again");
            assertThat(s.get("k").get()).containsExactly(1);
        }
    }

    /** Operations that succeed more often than once a period leave the store nothing to check: no PING. */
    @Test
    void aStoreInUseSendsNoPing() throws Exception {
        try (OwnRedis r = OwnRedis.start(dir.resolve("r")); LettuceRemoteStore s = openHoldingK(r, Duration.ofSeconds(1))) {
            r.cli("config", "resetstat");
            for (int i = 0; i < 300; i++) { // about 3 s, three periods
                assertThat(s.get("k").get()).containsExactly(1);
                Thread.sleep(10);
            }
            assertThat(r.cli("info", "commandstats")).contains("cmdstat_get:calls=300").doesNotContain("cmdstat_ping:");
            assertThat(s.breakerState()).isEqualTo("closed");
        }
    }
}

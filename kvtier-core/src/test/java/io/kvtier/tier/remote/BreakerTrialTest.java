package io.kvtier.tier.remote;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An idle store tries its own breaker when the open period ends (a PING), so that it closes when
 * the server is back with no operation sent: a dashboard read an idle {@code serve}'s breaker,
 * half-open and reported open, as a store still down after it had come back. Against a real
 * redis-server that is stopped and restarted, or frozen and thawed.
 */
class BreakerTrialTest {

    /** Long enough for a loaded machine's scheduling; the store tries itself every period. */
    private static final Duration PERIOD = Duration.ofMillis(100);

    @TempDir
    Path dir;

    private final List<String> lines = new CopyOnWriteArrayList<>();

    /** A store on {@code r} (timeout 500 ms, breaker open for {@link #PERIOD}) that has set {@code k} to {1}. */
    private LettuceRemoteStore openHoldingK(OwnRedis r) throws Exception {
        LettuceRemoteStore s = LettuceRemoteStore.open(RemoteSettings.of(List.of(r.url()), false, "t", null)
                .withTimeout(Duration.ofMillis(500)).withBreakerOpen(PERIOD), lines::add);
        s.set("k", new byte[] {1}).get();
        return s;
    }

    /** Three GETs of {@code k} fail by {@code cause}: the breaker opens. */
    private static void failThrice(LettuceRemoteStore s, RemoteFailure.Cause cause) {
        for (int i = 0; i < 3; i++) {
            Throwable t = catchThrowable(s.get("k")::get);
            assertThat(t).as("the operation failed").isInstanceOf(ExecutionException.class);
            assertThat(RemoteFailure.causeOf(t)).isEqualTo(cause);
        }
    }

    /** Waits (at most 30 s) until {@code state} gives {@code wanted}; the last state read. */
    private static String awaitState(Supplier<String> state, String wanted) throws InterruptedException {
        long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        String s = state.get();
        while (!s.equals(wanted) && System.nanoTime() < end) {
            Thread.sleep(10);
            s = state.get();
        }
        return s;
    }

    @Test
    void anIdleStoreClosesItsBreakerWhenTheServerIsBackAndSaysSo() throws Exception {
        try (OwnRedis r = OwnRedis.start(dir.resolve("r")); LettuceRemoteStore s = openHoldingK(r)) {
            r.kill();
            failThrice(s, RemoteFailure.Cause.UNAVAILABLE);
            // Five periods down and idle: each trial fails at once (the client is disconnected),
            // which is no new opening and no new line.
            Thread.sleep(5 * PERIOD.toMillis());
            assertThat(s.breakerState()).isIn("open", "half_open");
            assertThat(s.breakerOpens()).isEqualTo(1);
            assertThat(lines).hasSize(1).first().asString().startsWith("remote tier: " + r.url() + " stopped answering (unavailable: ");

            r.restart(); // empty, on the same port
            assertThat(awaitState(s::breakerState, "closed")).as("closed with no operation sent").isEqualTo("closed");
            assertThat(lines).hasSize(2).last().isEqualTo("remote tier: " + r.url() + " answers again");
            assertThat(r.cli("info", "commandstats")).as("the store's own PING closed it, no operation")
                    .contains("cmdstat_ping:").doesNotContain("cmdstat_get:", "cmdstat_set:", "cmdstat_touch:");
            assertThat(s.breakerOpens()).isEqualTo(1);
            assertThat(s.get("k").get()).as("a restarted server is empty").isNull();
        }
    }

    /** A frozen server: the store's own trial is out for a whole timeout, and the state says so. */
    @Test
    void aTrialOutToAFrozenServerIsHalfOpenAndTheThawClosesIt() throws Exception {
        try (OwnRedis r = OwnRedis.start(dir.resolve("r")); LettuceRemoteStore s = openHoldingK(r)) {
            r.freeze();
            failThrice(s, RemoteFailure.Cause.TIMEOUT);
            // Open for a period, then half-open for the timeout of the PING sent at its end, and again.
            assertThat(awaitState(s::breakerState, "half_open")).isEqualTo("half_open");
            assertThat(awaitState(s::breakerState, "open")).as("the trial timed out").isEqualTo("open");
            assertThat(s.breakerOpens()).isEqualTo(1);
            r.thaw();
            assertThat(awaitState(s::breakerState, "closed")).isEqualTo("closed");
            assertThat(lines).hasSize(2).last().isEqualTo("remote tier: " + r.url() + " answers again");
            assertThat(s.get("k").get()).containsExactly(1);
        }
    }
}

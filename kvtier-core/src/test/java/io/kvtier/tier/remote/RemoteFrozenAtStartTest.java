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
 * A server frozen ({@code SIGSTOP}) before the store opens accepts the TCP connection and never
 * answers the handshake. {@link LettuceRemoteStore#open} used to wait for the whole 10 s handshake
 * deadline whatever the operation timeout; it now waits at most {@link LettuceRemoteStore#openWait}
 * (3 s with the default 500 ms), says so in one line, refuses every operation as unavailable while
 * the connection is pending, and serves once the server thaws (saying so in a second line). The bound asserted on open (below
 * 10 s, after a first store has loaded the client's classes) is the old behaviour's least, so that
 * it holds on a loaded machine.
 */
class RemoteFrozenAtStartTest {

    @TempDir
    Path dir;

    @Test
    void theWaitIsFourTimeouts() {
        assertThat(LettuceRemoteStore.openWait(Duration.ofMillis(500))).as("at least 3 s").isEqualTo(Duration.ofSeconds(3));
        assertThat(LettuceRemoteStore.openWait(Duration.ofMillis(2000))).isEqualTo(Duration.ofSeconds(8));
        assertThat(LettuceRemoteStore.openWait(Duration.ofSeconds(60))).as("at most the handshake deadline")
                .isEqualTo(Duration.ofSeconds(10));
    }

    private static RemoteFailure.Cause failureOf(java.util.concurrent.CompletableFuture<?> f) {
        Throwable t = catchThrowable(f::get);
        assertThat(t).as("the operation failed").isInstanceOf(ExecutionException.class);
        return RemoteFailure.causeOf(t);
    }

    @Test
    void openReturnsBeforeTheHandshakeDeadlineRefusesOperationsAndServesOnceThawed() throws Exception {
        try (OwnRedis r = OwnRedis.start(dir.resolve("r"))) {
            RemoteSettings settings = RemoteSettings.of(List.of(r.url()), false, "t", null)
                    .withBreakerOpen(Duration.ofMillis(200));
            // A first store loads the client's classes (seconds on a loaded machine, before any wait starts).
            try (LettuceRemoteStore warm = LettuceRemoteStore.open(settings.withTimeout(Duration.ofSeconds(10)), line -> { })) {
                warm.set("warm", new byte[1]).get();
            }
            r.freeze();
            List<String> warnings = new CopyOnWriteArrayList<>();
            long t0 = System.nanoTime();
            try (LettuceRemoteStore s = LettuceRemoteStore.open(settings, warnings::add)) {
                long openNanos = System.nanoTime() - t0;
                assertThat(openNanos).as("open() took (ns), load %s", loadAverage()).isLessThan(Duration.ofSeconds(10).toNanos());
                assertThat(warnings).containsExactly("remote tier: cannot reach " + r.url()
                        + " (no answer within 3000 ms; still connecting); every lookup misses until it answers");
                assertThat(s.breakerState()).isEqualTo("open");
                assertThat(s.breakerOpens()).as("open from the start: its first opening (trial10: was 0)").isEqualTo(1);
                assertThat(failureOf(s.get("k"))).isEqualTo(RemoteFailure.Cause.UNAVAILABLE);
                assertThat(failureOf(s.set("k", new byte[] {7}))).isEqualTo(RemoteFailure.Cause.UNAVAILABLE);
                assertThat(s.allows("k")).isFalse();

                r.thaw();
                // The pending handshake is answered now, or (past its deadline) a later one connects.
                long end = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                boolean stored = false;
                while (!stored && System.nanoTime() < end) {
                    try {
                        s.set("k", new byte[] {7, 8, 9}).get();
                        stored = true;
                    } catch (ExecutionException notYet) {
                        Thread.sleep(100);
                    }
                }
                assertThat(stored).as("a SET succeeded within 60 s of the thaw").isTrue();
                assertThat(s.get("k").get()).containsExactly(7, 8, 9);
                assertThat(s.breakerState()).isEqualTo("closed");
                assertThat(s.breakerOpens()).isEqualTo(1);
                assertThat(warnings).as("one more line once it answers").hasSize(2)
                        .endsWith("remote tier: " + r.url() + " answered; lookups use it from now");
            }
        }
    }

    private static String loadAverage() {
        return String.valueOf(java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    }
}

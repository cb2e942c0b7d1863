package io.kvtier.tier.remote;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Closing the store ends promptly whatever the server does (trial 5: a SIGTERM'd generate with a
 * remote tier printed its summary, then hit the 20 s stop watchdog): the connection closes
 * without waiting on the server, and the client's threads end without Lettuce's default 2 s
 * quiet period. The bound asserted (10 s) is far above the expected ~0.1 s and far below the
 * 20 s watchdog, so that it holds on a loaded machine.
 */
class RemoteCloseTest {

    private static final long BOUND_NANOS = Duration.ofSeconds(10).toNanos();

    @TempDir
    Path dir;

    private static LettuceRemoteStore open(OwnRedis r) {
        // A long command timeout: a command in flight at close must not hold it until its deadline.
        return LettuceRemoteStore.open(RemoteSettings.of(List.of(r.url()), false, "t", null)
                .withTimeout(Duration.ofSeconds(60)).withBreakerOpen(Duration.ofSeconds(60)), line -> { });
    }

    private static Set<Thread> lettuceThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith("lettuce-"))
                .collect(Collectors.toSet());
    }

    /** Closes {@code s}; asserts it returned within the bound and that the threads it started have ended. */
    private static void closesPromptly(LettuceRemoteStore s, Set<Thread> before) throws InterruptedException {
        long t0 = System.nanoTime();
        s.close();
        assertThat(System.nanoTime() - t0).as("close() took (ns)").isLessThan(BOUND_NANOS);
        for (Thread t : lettuceThreads()) {
            if (!before.contains(t)) {
                t.join(Duration.ofSeconds(5));
                assertThat(t.isAlive()).as("thread %s after close", t.getName()).isFalse();
            }
        }
    }

    @Test
    void aHealthyServerClosesPromptlyAndItsThreadsEnd() throws Exception {
        try (OwnRedis r = OwnRedis.start(dir.resolve("r"))) {
            Set<Thread> before = lettuceThreads();
            LettuceRemoteStore s = open(r);
            s.set("k", new byte[] {1, 2, 3}).get();
            assertThat(s.get("k").get()).containsExactly(1, 2, 3);
            assertThat(lettuceThreads()).as("the client's threads while open").hasSizeGreaterThan(before.size());
            closesPromptly(s, before);
        }
    }

    @Test
    void aFrozenServerWithACommandInFlightClosesPromptly() throws Exception {
        try (OwnRedis r = OwnRedis.start(dir.resolve("r"))) {
            Set<Thread> before = lettuceThreads();
            LettuceRemoteStore s = open(r);
            s.set("k", new byte[] {1}).get();
            r.freeze();
            CompletableFuture<byte[]> inFlight = s.get("k"); // never answered: its 60 s timeout is far off
            closesPromptly(s, before);
            assertThat(inFlight).as("the command in flight ends with the close").failsWithin(Duration.ofSeconds(5));
            r.thaw();
        }
    }
}

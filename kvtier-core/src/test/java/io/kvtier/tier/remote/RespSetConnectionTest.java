package io.kvtier.tier.remote;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.lettuce.core.RedisCommandExecutionException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The SETs a plain-TCP store writes itself ({@link RespSetConnection}), on real servers: the
 * values land byte for byte, with the TTL, in the database and as the ACL user the URL names;
 * refusals fail their SETs with the server's reply; a frozen or killed server fails every SET
 * owed within the timeout (never a hang), and the next SETs connect again. The tier's own path
 * ({@link LettuceRemoteStore#setAll}) is checked end to end, including a refusal turning it off.
 */
class RespSetConnectionTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    @TempDir
    java.nio.file.Path dir;

    /** SETs of heap values one after another; after the first that fails, the rest fail with it unsent. */
    private static List<CompletableFuture<Void>> send(RespSetConnection c, List<String> keys, List<byte[]> values) {
        List<CompletableFuture<Void>> answers = new ArrayList<>();
        Throwable failed = null;
        for (int i = 0; i < keys.size(); i++) {
            CompletableFuture<Void> a = new CompletableFuture<>();
            answers.add(a);
            if (failed != null) {
                a.completeExceptionally(failed);
            } else if (!c.set(keys.get(i), new ByteBuffer[] {ByteBuffer.wrap(values.get(i))}, MemoryClaim.OWNED, a)) {
                failed = a.exceptionNow();
            }
        }
        return answers;
    }

    /** The tier's store on {@code r}, tenant {@code t}, standalone, warnings dropped. */
    private static LettuceRemoteStore store(OwnRedis r) {
        return LettuceRemoteStore.open(RemoteSettings.of(List.of(r.url()), false, "t", null).withTimeout(TIMEOUT), line -> { });
    }

    /** A native copy of {@code value}, as a host slot holds it. */
    private static MemorySegment offHeap(Arena arena, byte[] value) {
        MemorySegment m = arena.allocate(Math.max(1, value.length));
        MemorySegment.copy(MemorySegment.ofArray(value), 0, m, 0, value.length);
        return m.asSlice(0, value.length);
    }

    /** {@link LettuceRemoteStore#setFrom} of {@code value} cut into a header of 100 bytes and the rest. */
    private static CompletableFuture<Void> setFrom(LettuceRemoteStore s, Arena arena, String key, byte[] value, MemoryClaim claim) {
        MemorySegment m = offHeap(arena, value);
        return s.setFrom(key, m.asSlice(0, 100), m.asSlice(100), claim);
    }

    private static Throwable failure(CompletableFuture<?> f) {
        Throwable t = catchThrowable(() -> f.get(30, TimeUnit.SECONDS));
        assertThat(t).as("the SET failed (not a hang)").isInstanceOf(ExecutionException.class);
        return t.getCause();
    }

    private static byte[] bytes(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    @Test
    void theTierWritesLargeValuesFromMemoryItselfAndSmallOnesThroughLettuceEveryValueByteForByte() throws Exception {
        try (OwnRedis r = OwnRedis.start(dir.resolve("r"));
             Arena arena = Arena.ofConfined();
             LettuceRemoteStore s = store(r)) {
            int min = (int) LettuceRemoteStore.DIRECT_SET_MIN_BYTES;
            int[] small = {0, 1, 16 << 10, min - 1};
            int[] large = {min, 262_145, 3 << 20};
            List<String> keys = new ArrayList<>();
            List<byte[]> values = new ArrayList<>();
            for (int i = 0; i < small.length; i++) {
                assertThat(s.setsFromMemory(small[i])).as("%d bytes go through Lettuce", small[i]).isFalse();
                keys.add("kvt:v1:t:small:k" + i);
                values.add(bytes(small[i], i));
            }
            for (CompletableFuture<Void> a : s.setAll(keys, values)) {
                assertThat(a.get(30, TimeUnit.SECONDS)).isNull();
            }
            int lettuceOnly = r.cli("CLIENT", "LIST").split("\n").length; // redis-cli itself included
            List<CompletableFuture<Void>> answers = new ArrayList<>();
            for (int i = 0; i < large.length; i++) {
                assertThat(s.setsFromMemory(large[i])).as("%d bytes are set from memory", large[i]).isTrue();
                keys.add("kvt:v1:t:large:k" + i);
                values.add(bytes(large[i], 10 + i));
                answers.add(setFrom(s, arena, keys.getLast(), values.getLast(), MemoryClaim.OWNED));
            }
            for (CompletableFuture<Void> a : answers) {
                assertThat(a.get(30, TimeUnit.SECONDS)).isNull();
            }
            for (int i = 0; i < keys.size(); i++) {
                assertThat(s.get(keys.get(i)).get(30, TimeUnit.SECONDS)).as(keys.get(i)).isEqualTo(values.get(i));
            }
            assertThat(new int[] {lettuceOnly, r.cli("CLIENT", "LIST").split("\n").length})
                    .as("the large values' own connection").containsExactly(2, 3);
            assertThat(s.setsFromMemory(s.maxValueBytes() + 1)).as("above the limit").isFalse();
            assertThat(s.breakerState()).isEqualTo("closed");
        }
    }

    /**
     * A new user's trial: proto-max-bulk-len lowered on a running server below the values (1 MiB
     * against 2 MiB) failed every large SET, as "stopped answering (Connection reset by peer)"
     * when the server closed the socket before its error reply was read, and kept doing so. Now
     * the first refusal reads the limit again: the next values above it are not sent (the copier
     * counts them as oversize and says so once), smaller ones still are, and the breaker stays closed.
     */
    @Test
    void aBulkLimitLoweredWhileRunningIsReadAgainAtTheFirstRefusal() throws Exception {
        try (OwnRedis r = OwnRedis.start(dir.resolve("r"));
             Arena arena = Arena.ofConfined();
             LettuceRemoteStore s = store(r)) {
            assertThat(setFrom(s, arena, "kvt:v1:t:a", bytes(2 << 20, 1), MemoryClaim.OWNED).get(30, TimeUnit.SECONDS)).isNull();
            r.cli("CONFIG", "SET", "proto-max-bulk-len", "1mb");
            Throwable refused = failure(setFrom(s, arena, "kvt:v1:t:b", bytes(2 << 20, 2), MemoryClaim.OWNED));
            assertThat(RemoteFailure.causeOf(refused)).as("%s", refused)
                    .isIn(RemoteFailure.Cause.ERROR, RemoteFailure.Cause.UNAVAILABLE);
            long limit = (1 << 20) - (64 << 10);
            for (long end = System.nanoTime() + 10_000_000_000L; s.maxValueBytes() != limit && System.nanoTime() < end; ) {
                Thread.sleep(10);
            }
            assertThat(s.maxValueBytes()).as("the server's new limit less 64 KiB").isEqualTo(limit);
            assertThat(s.setsFromMemory(2 << 20)).isFalse();
            assertThat(failure(s.set("kvt:v1:t:c", bytes(2 << 20, 3)))).hasMessageContaining("exceeds the remote limit of " + limit);
            assertThat(setFrom(s, arena, "kvt:v1:t:d", bytes((int) limit, 4), MemoryClaim.OWNED).get(30, TimeUnit.SECONDS)).isNull();
            assertThat(r.cli("STRLEN", "kvt:v1:t:d")).isEqualTo(Long.toString(limit));
            assertThat(r.cli("EXISTS", "kvt:v1:t:b")).isEqualTo("0");
            assertThat(s.breakerState()).isEqualTo("closed");
        }
    }

    /**
     * A claim refused before the first byte sends nothing and keeps the connection; one refused
     * mid-value closes it, so the server never completes that SET (here: the server frozen after
     * the first part, then thawed) and counts as a timeout (the store did not take the value in
     * time), while a SET never sent counts nothing; the next SET connects again.
     */
    @Test
    void aClaimTakenBackMidValueClosesTheConnectionSoThePartialSetNeverLands() throws Exception {
        List<String> warnings = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (OwnRedis r = OwnRedis.start(dir.resolve("r"));
             Arena arena = Arena.ofConfined();
             // A breaker that opens at the first failure: a cancellation counted as one would open it.
             LettuceRemoteStore s = LettuceRemoteStore.open(new RemoteSettings(List.of(r.url()), false, "t", null, TIMEOUT,
                     Duration.ZERO, RemoteSettings.DEFAULT_MAX_VALUE_BYTES, 1, Duration.ofMillis(300), null), warnings::add)) {
            byte[] v = bytes(1 << 20, 1);
            MemoryClaim refused = new MemoryClaim() {
                @Override
                public boolean enter() {
                    return false;
                }

                @Override
                public void exit() {
                    throw new AssertionError("exit without enter");
                }
            };
            assertThat(setFrom(s, arena, "kvt:v1:t:warm", v, MemoryClaim.OWNED).get(30, TimeUnit.SECONDS)).isNull();
            assertThat(failure(setFrom(s, arena, "kvt:v1:t:never", v, refused)))
                    .hasMessage("the SET's memory was taken back before it was sent");
            assertThat(setFrom(s, arena, "kvt:v1:t:after", v, MemoryClaim.OWNED).get(30, TimeUnit.SECONDS)).isNull();
            assertThat(s.breakerOpens()).as("a SET never sent is no failure of the store").isZero();
            int clients = r.cli("CLIENT", "LIST").split("\n").length;

            r.freeze();
            int[] grants = {0};
            MemoryClaim once = new MemoryClaim() { // grants the first kernel copy only: the socket fills, the job ends
                @Override
                public boolean enter() {
                    return grants[0]++ == 0;
                }

                @Override
                public void exit() {
                }
            };
            CompletableFuture<Void> partial = setFrom(s, arena, "kvt:v1:t:partial", bytes(64 << 20, 3), once);
            assertThat(grants[0]).as("entered twice: a first part written, then refused").isEqualTo(2);
            assertThat(failure(partial)).hasMessageStartingWith("a SET's memory was taken back while it was being written");
            assertThat(s.breakerOpens()).as("cut mid-value: the store did not take it in time, a timeout").isEqualTo(1);
            r.thaw(); // the store's PING, sent when the open period ends, closes the breaker
            assertThat(Await.until(s::breakerState, "closed")).isEqualTo("closed");
            assertThat(setFrom(s, arena, "kvt:v1:t:next", v, MemoryClaim.OWNED).get(30, TimeUnit.SECONDS)).isNull();
            assertThat(r.cli("EXISTS", "kvt:v1:t:never")).isEqualTo("0");
            assertThat(r.cli("EXISTS", "kvt:v1:t:partial")).as("the partial SET never completes").isEqualTo("0");
            assertThat(r.cli("STRLEN", "kvt:v1:t:next")).isEqualTo(String.valueOf(v.length));
            assertThat(r.cli("CLIENT", "LIST").split("\n").length).as("the closed connection replaced by one").isEqualTo(clients);
            assertThat(s.breakerState()).isEqualTo("closed");
            assertThat(Await.until(warnings::size, 2)).as("the outage and the return: %s", warnings).isEqualTo(2);
            assertThat(warnings).allMatch(w -> w.startsWith("remote tier: "));
        }
    }

    @Test
    void theTtlTheDatabaseAndTheAclUserOfTheUrlAreUsed() throws Exception {
        try (OwnRedis r = OwnRedis.start(dir.resolve("r"), "user alice on >alice-pw ~kvt:* +@all");
             RespSetConnection c = new RespSetConnection("127.0.0.1", r.port(), "alice", "alice-pw", 3,
                     Duration.ofSeconds(100), TIMEOUT)) {
            StringBuilder text = new StringBuilder();
            Random random = new Random(7);
            for (int i = 0; i < 1000; i++) {
                text.append((char) ('a' + random.nextInt(26)));
            }
            byte[] v = text.toString().getBytes(java.nio.charset.StandardCharsets.US_ASCII);
            assertThat(send(c, List.of("kvt:a"), List.of(v)).getFirst().get(30, TimeUnit.SECONDS)).isNull();
            assertThat(r.cli("--user", "alice", "--pass", "alice-pw", "-n", "3", "--no-auth-warning", "STRLEN", "kvt:a")).isEqualTo("1000");
            assertThat(r.cli("--user", "alice", "--pass", "alice-pw", "-n", "0", "--no-auth-warning", "EXISTS", "kvt:a"))
                    .as("not in database 0").isEqualTo("0");
            long ttl = Long.parseLong(r.cli("--user", "alice", "--pass", "alice-pw", "-n", "3", "--no-auth-warning", "PTTL", "kvt:a"));
            assertThat(ttl).isBetween(1L, 100_000L);
            assertThat(r.cli("--user", "alice", "--pass", "alice-pw", "-n", "3", "--no-auth-warning", "GET", "kvt:a")).isEqualTo(text.toString());
        }
    }

    /** Lettuce serves a server that has no password although one was given: so do these SETs, counted as stored. */
    @Test
    void aPasswordGivenToAServerWithoutOneStillStores() throws Exception {
        try (OwnRedis r = OwnRedis.start(dir.resolve("r"));
             RespSetConnection c = new RespSetConnection("127.0.0.1", r.port(), null, "needless-pw", 0, Duration.ZERO, TIMEOUT)) {
            List<CompletableFuture<Void>> answers = send(c, List.of("kvt:a", "kvt:b"), List.of(new byte[] {1}, new byte[] {2, 2}));
            for (CompletableFuture<Void> a : answers) {
                assertThat(a.get(30, TimeUnit.SECONDS)).isNull();
            }
            assertThat(r.cli("STRLEN", "kvt:b")).isEqualTo("2");
        }
    }

    @Test
    void aWrongPasswordFailsEverySetWithTheServersReply() throws Exception {
        try (OwnRedis r = OwnRedis.start(dir.resolve("r"), "requirepass right-pw");
             RespSetConnection c = new RespSetConnection("127.0.0.1", r.port(), null, "wrong-pw", 0, Duration.ZERO, TIMEOUT)) {
            List<CompletableFuture<Void>> answers = send(c, List.of("kvt:a", "kvt:b"), List.of(new byte[] {1}, new byte[] {2}));
            for (CompletableFuture<Void> a : answers) {
                Throwable t = failure(a);
                assertThat(t).isInstanceOf(RedisCommandExecutionException.class);
                assertThat(RemoteErrors.isAuthError(t.getMessage())).as(t.getMessage()).isTrue();
            }
            assertThat(r.cli("-a", "right-pw", "--no-auth-warning", "DBSIZE")).isEqualTo("0");
        }
    }

    @Test
    void aRefusedKeyFailsItsSetAloneAndTheTierTurnsOff() throws Exception {
        try (OwnRedis r = OwnRedis.start(dir.resolve("r"), "user alice on >alice-pw ~other:* +@all");
             RespSetConnection c = new RespSetConnection("127.0.0.1", r.port(), "alice", "alice-pw", 0, Duration.ZERO, TIMEOUT)) {
            List<CompletableFuture<Void>> answers = send(c, List.of("kvt:a", "other:b"), List.of(new byte[] {1}, new byte[] {2}));
            assertThat(failure(answers.get(0))).isInstanceOf(RedisCommandExecutionException.class).hasMessageStartingWith("NOPERM");
            assertThat(answers.get(1).get(30, TimeUnit.SECONDS)).isNull();
            assertThat(r.cli("--user", "alice", "--pass", "alice-pw", "--no-auth-warning", "STRLEN", "other:b")).isEqualTo("1");
        }
        List<String> warnings = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (OwnRedis r = OwnRedis.start(dir.resolve("r2"), "user alice on >alice-pw ~other:* +@all");
             LettuceRemoteStore s = LettuceRemoteStore.open(RemoteSettings.of(List.of("redis://alice@127.0.0.1:" + r.port()),
                     false, "t", "alice-pw").withTimeout(TIMEOUT), warnings::add)) {
            byte[] large = new byte[(int) LettuceRemoteStore.DIRECT_SET_MIN_BYTES]; // written directly
            List<CompletableFuture<Void>> answers;
            try (Arena arena = Arena.ofConfined()) {
                answers = List.of(setFrom(s, arena, "kvt:v1:t:ns:k1", large, MemoryClaim.OWNED),
                        setFrom(s, arena, "kvt:v1:t:ns:k2", large, MemoryClaim.OWNED));
                answers.forEach(a -> catchThrowable(() -> a.get(30, TimeUnit.SECONDS))); // answered before the memory goes
            }
            assertThat(failure(answers.get(0))).isInstanceOf(RemoteFailure.class);
            assertThat(s.offReason()).startsWith("the server refused key kvt:v1:t:ns:k1 (NOPERM ");
            assertThat(warnings).containsExactly("remote tier off: " + s.offReason());
        }
    }

    @Test
    void aFrozenServerFailsEveryOwedSetWithinTheTimeoutAndTheNextSetsConnectAgain() throws Exception {
        Duration timeout = Duration.ofMillis(500);
        try (OwnRedis r = OwnRedis.start(dir.resolve("r"));
             RespSetConnection c = new RespSetConnection("127.0.0.1", r.port(), null, null, 0, Duration.ZERO, timeout)) {
            assertThat(send(c, List.of("kvt:warm"), List.of(new byte[] {1})).getFirst().get(30, TimeUnit.SECONDS)).isNull();
            r.freeze();
            long t0 = System.nanoTime();
            // 3 x 8 MiB: more than the socket buffers hold, so a write blocks until the deadline closes it.
            List<CompletableFuture<Void>> answers = send(c, List.of("kvt:a", "kvt:b", "kvt:c"),
                    List.of(bytes(8 << 20, 1), bytes(8 << 20, 2), bytes(8 << 20, 3)));
            for (CompletableFuture<Void> a : answers) {
                assertThat(RemoteFailure.causeOf(failure(a))).isEqualTo(RemoteFailure.Cause.TIMEOUT);
            }
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).as("failed within the deadlines").isLessThan(Duration.ofSeconds(20));
            // Frozen after a small SET was written: its reply's deadline fails it.
            CompletableFuture<Void> small = send(c, List.of("kvt:d"), List.of(new byte[] {4})).getFirst();
            assertThat(RemoteFailure.causeOf(failure(small))).isEqualTo(RemoteFailure.Cause.TIMEOUT);
            r.thaw();
            assertThat(send(c, List.of("kvt:e"), List.of(new byte[] {5, 5})).getFirst().get(30, TimeUnit.SECONDS)).isNull();
            assertThat(r.cli("STRLEN", "kvt:e")).isEqualTo("2");
        }
    }

    @Test
    void aKilledServerFailsTheSetsAsUnavailableAndARestartedOneServesAgain() throws Exception {
        try (OwnRedis r = OwnRedis.start(dir.resolve("r"));
             RespSetConnection c = new RespSetConnection("127.0.0.1", r.port(), null, null, 0, Duration.ZERO, TIMEOUT)) {
            assertThat(send(c, List.of("kvt:warm"), List.of(new byte[] {1})).getFirst().get(30, TimeUnit.SECONDS)).isNull();
            r.kill();
            List<CompletableFuture<Void>> answers = send(c, List.of("kvt:a", "kvt:b"), List.of(bytes(1 << 20, 1), new byte[] {2}));
            for (CompletableFuture<Void> a : answers) {
                assertThat(RemoteFailure.causeOf(failure(a))).isEqualTo(RemoteFailure.Cause.UNAVAILABLE);
            }
            // Refused while it is down: each batch tries to connect once and fails at once.
            assertThat(failure(send(c, List.of("kvt:c"), List.of(new byte[] {3})).getFirst())).isInstanceOf(IOException.class);
            r.restart();
            assertThat(send(c, List.of("kvt:d"), List.of(new byte[] {4, 4, 4})).getFirst().get(30, TimeUnit.SECONDS)).isNull();
            assertThat(r.cli("STRLEN", "kvt:d")).isEqualTo("3");
        }
    }

    @Test
    void setsAfterCloseFailAtOnce() throws Exception {
        URI u = URI.create(RedisServers.standalone().replaceFirst("^redis://", "http://"));
        RespSetConnection c = new RespSetConnection(u.getHost(), u.getPort(), null, null, 0, Duration.ZERO, TIMEOUT);
        c.close();
        assertThat(failure(send(c, List.of("kvt:closed"), List.of(new byte[] {1})).getFirst()))
                .isInstanceOf(IOException.class).hasMessage("the store is closed");
    }
}

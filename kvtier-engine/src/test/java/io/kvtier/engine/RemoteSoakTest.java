package io.kvtier.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.offload.OffloadConfig;
import io.kvtier.offload.RemoteStats;
import io.kvtier.tier.remote.OwnRedis;
import io.kvtier.tier.remote.RemoteSettings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * ACCEPTANCE S01 with a remote tier (issue 11): mixed requests over a few shared prefixes, a host
 * tier too small for them (so chunks come back from the store), aborts, device and host cache
 * resets, on the fingerprint model and a private redis-server, while the store suffers random
 * faults: values corrupted in place ({@code SETRANGE}), truncated, or replaced by another key's
 * bytes; keys deleted between probe and read (nil reads); the server frozen ({@code SIGSTOP}:
 * timeouts) and killed then restarted empty (store down and up). Every invariant holds after
 * every step, every output equals the request run alone without any cache, nothing leaks after
 * the drain, and the counters show each fault kind was met. After an outage no new fault comes
 * until the tier has served again ({@link SoakStoreFaults}: on an idle machine the whole run is
 * shorter than one way back from an outage).
 *
 * <p>A seed runs to a goal, not to a count: at least {@code -Dkvtier.soak.remote.requests=N}
 * requests (default 120), then N more at a time until the tier has loaded at least
 * {@code -Dkvtier.soak.remote.loads=K} chunks (default 20) and met its fault schedule (a freeze, a
 * kill, a damaged value and a failed load). On an idle machine a fixed length ended some runs
 * before the tier had served (seed 22 loaded 2-13 chunks in 250 steps, half of them spent
 * recovering), so the checks below could pass or fail by the machine's speed. A run that has not
 * reached the goal within {@code -Dkvtier.soak.remote.maxRequests} requests (default 20 x N) or
 * {@code -Dkvtier.soak.remote.maxSeconds} (default 600) fails with what it reached.
 */
class RemoteSoakTest {

    private static final int REQUESTS = Integer.getInteger("kvtier.soak.remote.requests", 120);
    private static final int LOADS = Integer.getInteger("kvtier.soak.remote.loads", 20);
    private static final int MAX_REQUESTS = Integer.getInteger("kvtier.soak.remote.maxRequests", 20 * REQUESTS);
    private static final long MAX_SECONDS = Long.getLong("kvtier.soak.remote.maxSeconds", 600);

    @TempDir
    Path dir;

    @ParameterizedTest(name = "seed {0}, host tier of {1} chunks")
    @CsvSource({"11, 2", "22, 3"})
    void s01_soakWithRandomStoreFaults(long seed, int hostChunks) throws Exception {
        try (OwnRedis redis = OwnRedis.start(dir.resolve("redis"))) {
            soak(seed, hostChunks, redis);
        } catch (AssertionError | RuntimeException e) {
            throw new AssertionError("S01 remote soak failed with seed " + seed + ": " + e.getMessage(), e);
        }
    }

    /**
     * Runs a request over {@code prefix} until its first chunk is in the store (the breaker may
     * still be open after the last outage), damages that chunk there, drops it from the host tier
     * and the device prefix cache, and runs the request again while the write's hint still says
     * the store holds it: the read finds the damage, and the request recomputes from that chunk
     * (with no damage, the chunk loads from the store).
     */
    private static List<Request> coda(OffloadFixture f, SoakStoreFaults faults, int[] prefix, SplittableRandom rnd,
                                      java.util.function.Consumer<String> damage) throws InterruptedException {
        int[] prompt = FingerprintEngines.concat(prefix, FingerprintEngines.randomTokens(rnd, 2 * 4 * f.blocksPerChunk));
        List<Request> out = new ArrayList<>();
        String key = null;
        for (int attempt = 0; attempt < 100 && (key == null || !faults.holds(key)); attempt++) {
            Thread.sleep(attempt == 0 ? 0 : 50);
            f.engine.resetCache();
            Request r = f.submit(prompt, 2);
            f.run();
            out.add(r);
            key = f.remoteKeys.of(r.blockKeys().get(f.blocksPerChunk - 1));
        }
        assertThat(faults.holds(key)).as("the store took the coda's chunk").isTrue();
        damage.accept(key);
        f.host.index().remove(out.getLast().blockKeys().get(f.blocksPerChunk - 1));
        f.engine.resetDevicePrefixCache();
        out.add(f.submit(prompt, 2));
        f.run();
        return out;
    }

    /**
     * Whether the run may end: the tier has loaded {@link #LOADS} chunks and the store has met its
     * fault schedule (a freeze, a kill, a damaged value, and a load cut by one of them).
     */
    private static boolean goalMet(OffloadFixture f, SoakStoreFaults faults) {
        RemoteStats rs = f.offload.remoteStats();
        return rs.chunksLoaded() >= LOADS && faults.freezes > 0 && faults.kills > 0
                && faults.corrupted + faults.truncated + faults.swapped + faults.deleted > 0
                && rs.loadFailures().values().stream().mapToLong(Long::longValue).sum() > 0;
    }

    private void soak(long seed, int hostChunks, OwnRedis redis) throws Exception {
        SplittableRandom rnd = new SplittableRandom(seed);
        int blocksPerChunk = 1 + rnd.nextInt(2);
        OffloadConfig oc = OffloadConfig.DEFAULT.withBlocksPerChunk(blocksPerChunk).withOffloadPromptOnly(rnd.nextBoolean())
                .withJobDeadline(Duration.ofSeconds(5));
        EngineConfig ec = FingerprintEngines.config(4, 24).withMaxBatchTokens(8 + rnd.nextInt(56));
        String policy = rnd.nextBoolean() ? "lru" : "arc";
        List<int[]> prefixes = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            prefixes.add(FingerprintEngines.randomTokens(rnd, 4 + rnd.nextInt(17)));
        }
        // Short timeouts so a frozen store costs little; the breaker probes the store back soon.
        RemoteSettings settings = RemoteSettings.of(List.of(redis.url()), false, "soak" + seed, null)
                .withTimeout(Duration.ofMillis(250)).withBreakerOpen(Duration.ofMillis(100));
        try (OffloadFixture f = OffloadFixture.withRemote(ec, hostChunks, oc, policy, settings, 1L << 20);
             SoakStoreFaults faults = new SoakStoreFaults(redis, rnd.split(), f.remoteKeys.prefix(),
                     () -> f.offload.remoteStats().chunksStored() + f.offload.remoteStats().chunksLoaded())) {
            f.bytesCheckEvery = 1;
            SoakRequests requests = new SoakRequests(rnd, prefixes, REQUESTS);
            List<Request> all = requests.all();
            int steps = 0;
            int limit = REQUESTS;
            long start = System.nanoTime();
            while (!requests.allSubmitted() || f.engine.hasWork() || !goalMet(f, faults)) {
                if (requests.allSubmitted() && !f.engine.hasWork()) {
                    long seconds = (System.nanoTime() - start) / 1_000_000_000L;
                    if (limit + REQUESTS > MAX_REQUESTS || seconds > MAX_SECONDS) {
                        throw new AssertionError("the remote tier did not reach the soak's goal (" + LOADS
                                + " chunks loaded, a freeze, a kill, a damaged value, a failed load) within " + limit
                                + " requests, " + steps + " steps, " + seconds + " s (caps: -Dkvtier.soak.remote.maxRequests="
                                + MAX_REQUESTS + ", -Dkvtier.soak.remote.maxSeconds=" + MAX_SECONDS + "): " + faults
                                + " remote[loaded=" + f.offload.remoteStats().chunksLoaded() + " loadFailures="
                                + f.offload.remoteStats().loadFailures() + "]");
                    }
                    requests.extend(REQUESTS);
                    limit += REQUESTS;
                }
                requests.arrive(f);
                if (rnd.nextInt(8) == 0) {
                    f.engine.resetCache(); // the host tier forgets: the next hits come from the store
                }
                if (rnd.nextInt(3) == 0) {
                    f.engine.resetDevicePrefixCache();
                }
                faults.step();
                long before = f.engine.stats().steps();
                f.step();
                if (f.engine.stats().steps() == before && f.offload.busy()) {
                    f.engine.drainTransfers();
                }
                assertThat(++steps).as("steps").isLessThan(100 * limit);
            }
            long runMillis = (System.nanoTime() - start) / 1_000_000;
            faults.heal();
            f.engine.drainTransfers();
            // A fixed coda: a deleted and a corrupted key the engine believes the store holds.
            all.addAll(coda(f, faults, prefixes.get(0), rnd, faults::delete));
            all.addAll(coda(f, faults, prefixes.get(1), rnd, faults::corrupt));
            // And an intact one (nothing damaged): it must load from the store (RemoteIntactChunkTest counts it exactly).
            List<Request> intact = coda(f, faults, prefixes.get(2), rnd, key -> { });
            all.addAll(intact);
            assertThat(intact.getLast().externalHitTokens().getOrDefault("remote", 0))
                    .as("the intact coda's first chunk, loaded from the store").isPositive();
            f.checkInvariants();
            f.assertDrained();
            int aborted = FingerprintEngines.assertMatchReferences(all);
            RemoteStats rs = f.offload.remoteStats();
            String summary = faults + " remote[loaded=" + rs.chunksLoaded() + " stored=" + rs.chunksStored() + " loadFailures="
                    + rs.loadFailures() + " storeFailures=" + rs.storeFailures() + " dropped=" + rs.storesDroppedBy()
                    + " breakerOpens=" + rs.breakerOpens() + "] aborted=" + aborted + " requests=" + limit + " steps=" + steps + " in " + runMillis + " ms";
            System.out.println("remote soak seed " + seed + ": " + summary);
            // The run must really exercise what it claims to: remote hits, and each fault met by the right counter.
            assertThat(rs.chunksLoaded()).as("chunks loaded from the store; %s", summary).isGreaterThanOrEqualTo(LOADS);
            // Which failure a damaged key meets depends on timing (a probe answer's age, a promotion
            // refused while the host tier's room is held by a write in flight, a load cut by an outage
            // first: seed 22 on an idle machine met its damaged keys only through loads that failed as
            // 'unavailable'), so the soak asks for a failed load of some kind; the outputs above prove
            // no damaged byte was used, and RemoteCopierTest meets verify and miss deterministically.
            assertThat(rs.loadFailures().values().stream().mapToLong(Long::longValue).sum())
                    .as("loads cut by a damaged value, a missing key or an outage; %s", summary).isPositive();
            assertThat(faults.freezes + faults.kills).as("store outages; %s", summary).isPositive();
            assertThat(rs.breakerOpens() + rs.storesDropped()).as("outages met by the breaker; %s", summary).isPositive();
            OutageLines.assertOnlyOutages(f.remoteWarnings); // injected outages are said, nothing else
        }
    }
}

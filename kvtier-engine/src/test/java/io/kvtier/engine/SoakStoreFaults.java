package io.kvtier.engine;

import io.kvtier.tier.remote.OwnRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.LongSupplier;

/**
 * The store faults of {@link RemoteSoakTest}, injected from the test's own connection: at each
 * step, maybe one fault: a value corrupted in place ({@code SETRANGE}), truncated, replaced by
 * another key's bytes, or deleted; the server frozen ({@code SIGSTOP}) or killed for 2-7 steps
 * (then thawed, or restarted empty).
 *
 * <p>An outage lasts a number of steps, but the tier's way back is counted in wall-clock time
 * (the store's timeout, the breaker's period, the client's reconnection). On an idle machine a
 * step takes about 2.5 ms, so the whole run (about 250 steps) is shorter than one way back, and
 * a kill early in the run left the tier unavailable to its end (seed 22: no chunk loaded,
 * every store dropped as {@code unavailable}, in 2 of 13 runs). So after an outage ends, no new
 * fault is injected until the tier has served again: {@code served} (its stores and loads that
 * completed) has grown since the outage ended.
 */
final class SoakStoreFaults implements AutoCloseable {

    private static final RedisCodec<String, byte[]> CODEC = RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE);

    final OwnRedis redis;
    final SplittableRandom rnd;
    final String pattern;
    final RedisClient client;
    private final LongSupplier served;
    StatefulRedisConnection<String, byte[]> conn;
    int frozenSteps;
    int downSteps;
    /** {@link #served} when the last outage ended; -1: no outage waits for the tier to serve again. */
    long servedAtRecovery = -1;
    int corrupted;
    int truncated;
    int swapped;
    int deleted;
    int freezes;
    int kills;
    /** Steps on which no fault was rolled because the tier had not served since the last outage. */
    int recoverySteps;

    /**
     * @param served the tier's completed stores and loads so far (grows when it serves)
     */
    SoakStoreFaults(OwnRedis redis, SplittableRandom rnd, String keyPrefix, LongSupplier served) {
        this.redis = redis;
        this.rnd = rnd;
        this.pattern = keyPrefix + "*";
        this.served = served;
        this.client = RedisClient.create(RedisURI.builder().withHost("127.0.0.1").withPort(redis.port())
                .withTimeout(Duration.ofSeconds(5)).build());
    }

    private RedisCommands<String, byte[]> cmd() {
        if (conn == null) {
            conn = client.connect(CODEC);
        }
        return conn.sync();
    }

    /** Maybe injects one fault; ends a freeze or an outage whose time is up. */
    void step() throws Exception {
        if (frozenSteps > 0 && --frozenSteps == 0) {
            redis.thaw();
            servedAtRecovery = served.getAsLong();
        }
        if (downSteps > 0 && --downSteps == 0) {
            redis.restart();
            conn = null; // a new server: a new connection
            servedAtRecovery = served.getAsLong();
        }
        if (frozenSteps > 0 || downSteps > 0) {
            return;
        }
        if (servedAtRecovery >= 0) {
            if (served.getAsLong() <= servedAtRecovery) {
                recoverySteps++;
                return; // the tier is not back yet: no new fault (and no draw, so the faults' order is kept)
            }
            servedAtRecovery = -1;
        }
        int dice = rnd.nextInt(200);
        if (dice < 4) {
            redis.freeze();
            freezes++;
            frozenSteps = 2 + rnd.nextInt(6);
        } else if (dice < 6) {
            redis.kill();
            kills++;
            downSteps = 2 + rnd.nextInt(6);
            if (conn != null) {
                conn.close();
                conn = null;
            }
        } else if (dice < 30) {
            damageOneValue();
        }
    }

    private void damageOneValue() {
        try {
            List<String> keys = new ArrayList<>(cmd().keys(pattern));
            if (keys.isEmpty()) {
                return;
            }
            keys.sort(null); // the seed picks the same key for the same set of keys
            String key = keys.get(rnd.nextInt(keys.size()));
            byte[] value = cmd().get(key);
            if (value == null || value.length < 2) {
                return;
            }
            switch (rnd.nextInt(4)) {
                case 0 -> {
                    int at = rnd.nextInt(value.length);
                    cmd().setrange(key, at, new byte[] {(byte) ~value[at]});
                    corrupted++;
                }
                case 1 -> {
                    cmd().set(key, Arrays.copyOf(value, rnd.nextInt(value.length)));
                    truncated++;
                }
                case 2 -> {
                    String other = keys.get(rnd.nextInt(keys.size()));
                    byte[] bytes = cmd().get(other);
                    if (!other.equals(key) && bytes != null) {
                        cmd().set(key, bytes);
                        swapped++;
                    }
                }
                default -> {
                    cmd().del(key);
                    deleted++;
                }
            }
        } catch (RedisException e) {
            conn = null; // the server is restarting: skip this fault
        }
    }

    /** Whether the store holds {@code key} now. */
    boolean holds(String key) {
        try {
            return cmd().exists(key) == 1;
        } catch (RedisException e) {
            conn = null;
            return false;
        }
    }

    /** Sets {@code key} to {@code value} in the store. */
    void put(String key, byte[] value) {
        cmd().set(key, value);
    }

    /** Deletes {@code key} (a nil read for its next reader). */
    void delete(String key) {
        cmd().del(key);
        deleted++;
    }

    /** Flips the last byte of {@code key}'s value (a bad payload for its next reader). */
    void corrupt(String key) {
        byte[] value = cmd().get(key);
        cmd().setrange(key, value.length - 1, new byte[] {(byte) ~value[value.length - 1]});
        corrupted++;
    }

    /** Ends every fault: the server runs and answers. */
    void heal() throws Exception {
        if (frozenSteps > 0) {
            redis.thaw();
            frozenSteps = 0;
        }
        if (downSteps > 0) {
            redis.restart();
            downSteps = 0;
        }
    }

    @Override
    public void close() {
        if (conn != null) {
            conn.close();
        }
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }

    @Override
    public String toString() {
        return "faults[corrupted=" + corrupted + " truncated=" + truncated + " swapped=" + swapped + " deleted=" + deleted
                + " freezes=" + freezes + " kills=" + kills + " recoverySteps=" + recoverySteps + "]";
    }
}

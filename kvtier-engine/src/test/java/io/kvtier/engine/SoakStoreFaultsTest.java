package io.kvtier.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.tier.remote.OwnRedis;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The remote soak's faults wait for the tier to come back after an outage ({@link SoakStoreFaults}):
 * on an idle machine the soak's steps are so quick that an early kill, followed by more faults
 * before the tier had reconnected, left it unavailable to the end of the run (RemoteSoakTest seed
 * 22: no chunk loaded). Real server; the tier's progress is a counter the test moves.
 */
class SoakStoreFaultsTest {

    /** The first draw of this seed kills the server for 5 steps. */
    private static final long KILL_FIRST = 111;

    @TempDir
    Path dir;

    @Test
    void noFaultIsInjectedAfterAnOutageUntilTheTierHasServedAgain() throws Exception {
        AtomicLong served = new AtomicLong();
        try (OwnRedis redis = OwnRedis.start(dir.resolve("redis"));
             SoakStoreFaults faults = new SoakStoreFaults(redis, new SplittableRandom(KILL_FIRST), "t:", served::get)) {
            faults.put("t:a", new byte[64]); // a value the damage faults can find
            faults.put("t:b", new byte[64]);
            faults.step();
            assertThat(faults.kills).isEqualTo(1);
            assertThat(redis.isAlive()).isFalse();
            for (int i = 0; i < 5; i++) {
                faults.step();
            }
            assertThat(redis.isAlive()).as("restarted at the fifth step after the kill").isTrue();
            faults.put("t:a", new byte[64]); // restarted empty: give the damage faults a value again
            faults.put("t:b", new byte[64]);
            // The tier has not served since: the restart's step and 100 more (about 15 faults at this rate) inject nothing.
            for (int i = 0; i < 100; i++) {
                faults.step();
            }
            assertThat(faults.toString()).isEqualTo(
                    "faults[corrupted=0 truncated=0 swapped=0 deleted=0 freezes=0 kills=1 recoverySteps=101]");
            assertThat(redis.isAlive()).isTrue();
            assertThat(redis.cli("PING")).as("not frozen").isEqualTo("PONG");
            // Once it has served, the faults go on.
            served.incrementAndGet();
            int before = faults.corrupted + faults.truncated + faults.swapped + faults.deleted + faults.freezes + faults.kills;
            for (int i = 0; i < 100 && faults.frozenSteps == 0 && faults.downSteps == 0; i++) {
                faults.step();
            }
            assertThat(faults.corrupted + faults.truncated + faults.swapped + faults.deleted + faults.freezes + faults.kills)
                    .as("faults after the tier served; %s", faults).isGreaterThan(before);
            faults.heal();
        }
    }
}

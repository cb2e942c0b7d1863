package io.kvtier.offload;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The per-tier and per-cause maps of the stats iterate in name order, so the summary lines and
 * {@code --stats-json} print them alike in every run (a new user's trial saw
 * {@code loaded {remote=2, host=2}} in one run and {@code {host=2, remote=2}} in another:
 * {@code Map.copyOf}'s order changes from JVM to JVM).
 */
class StatsOrderTest {

    @Test
    void perTierAndPerCauseMapsIterateInNameOrder() {
        OffloadStats s = new OffloadStats();
        for (String tier : new String[] {"remote", "host", "disk"}) {
            s.blocksLoaded.add(tier, 1L);
            s.blocksStored.add(tier, 1L);
            s.externalHitTokens.put(tier, 16L);
        }
        assertThat(s.blocksLoaded().keySet()).containsExactly("disk", "host", "remote");
        assertThat(s.blocksStored().keySet()).containsExactly("disk", "host", "remote");
        assertThat(s.externalHitTokens().keySet()).containsExactly("disk", "host", "remote");
        RemoteStats r = new RemoteStats();
        for (String cause : new String[] {"verify", "miss", "timeout", "error"}) {
            r.loadFailures.put(cause, 1L);
        }
        assertThat(r.loadFailures().keySet()).containsExactly("error", "miss", "timeout", "verify");
    }
}

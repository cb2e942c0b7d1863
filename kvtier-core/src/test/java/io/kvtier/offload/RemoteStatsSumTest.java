package io.kvtier.offload;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The breaker state of a model with several KV groups (one remote store, shared), from the groups' states. */
class RemoteStatsSumTest {

    /** The groups read the openings of the one store they share: counted once, not once per group. */
    @Test
    void theSharedStoresOpeningsCountOnce() {
        java.util.List<RemoteStats> groups = java.util.stream.IntStream.range(0, 2).mapToObj(i -> {
            RemoteStats s = new RemoteStats();
            s.breakerState = "closed";
            s.breakerOpens = 3;
            s.chunksStored = 10 + i;
            return s;
        }).toList();
        RemoteStats sum = RemoteStats.sum(groups);
        assertThat(sum.breakerOpens()).isEqualTo(3);
        assertThat(sum.chunksStored()).as("the groups' own counts add up").isEqualTo(21);
    }

    private static String sumOf(String... states) {
        return RemoteStats.sum(Arrays.stream(states).map(st -> {
            RemoteStats s = new RemoteStats();
            s.breakerState = st;
            return s;
        }).toList()).breakerState();
    }

    @Test
    void groupsInOneStateAreInIt() {
        assertThat(sumOf("closed", "closed")).isEqualTo("closed");
        assertThat(sumOf("half_open", "half_open")).isEqualTo("half_open");
        assertThat(sumOf("open", "open", "open")).isEqualTo("open");
    }

    @Test
    void someGroupServingIsPartialAndNoneServingWithATrialOutIsHalfOpen() {
        assertThat(sumOf("closed", "open")).isEqualTo("partial");
        assertThat(sumOf("half_open", "closed")).isEqualTo("partial");
        assertThat(sumOf("open", "half_open")).as("no group serves: not 'some keys answer'").isEqualTo("half_open");
        assertThat(sumOf("half_open", "open", "closed")).isEqualTo("partial");
    }
}

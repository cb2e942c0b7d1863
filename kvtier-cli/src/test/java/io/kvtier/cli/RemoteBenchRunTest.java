package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.tier.remote.RemoteSettings;
import java.util.List;
import java.util.concurrent.CancellationException;
import org.junit.jupiter.api.Test;

/**
 * What a signal does to a {@code bench offload --remote-url} run, without a server: its figures
 * and redis-benchmark stop, and the hook's one line counts what it removed (the removal against a
 * real server: {@code BenchOffloadCommandTest}).
 */
class RemoteBenchRunTest {

    private final RemoteBenchRun run = new RemoteBenchRun(RemoteSettings.of(List.of("redis://127.0.0.1:1"), false, "bench", null), null);

    @Test
    void theHooksLineSaysWhatItRemovedInTheRightNumber() {
        String pattern = "kvt:v1:" + run.tenant() + ":*";
        assertThat(run.tenant()).matches("bench[0-9a-f]{6}");
        assertThat(run.removed(54, true)).isEqualTo("removed 54 keys " + pattern + " and key:__rand_int__ from redis://127.0.0.1:1");
        assertThat(run.removed(1, false)).isEqualTo("removed 1 key " + pattern + " from redis://127.0.0.1:1");
        assertThat(run.removed(0, true)).isEqualTo("removed key:__rand_int__ from redis://127.0.0.1:1");
        assertThat(run.removed(0, false)).isEqualTo("no key of it was left on redis://127.0.0.1:1");
    }

    @Test
    void aStopEndsRedisBenchmarkAndEveryLaterStep() throws Exception {
        Process child = run.start(new ProcessBuilder("sleep", "600"));
        run.enter();
        run.exit();
        run.stop();
        assertThat(child.isAlive()).as("the child stopped").isFalse();
        assertThat(run.stopping()).isTrue();
        assertThatThrownBy(run::checkRunning).isInstanceOf(CancellationException.class).hasMessage("bench offload: stopped by a signal");
        assertThatThrownBy(run::enter).isInstanceOf(CancellationException.class);
        assertThatThrownBy(() -> run.start(new ProcessBuilder("sleep", "600"))).isInstanceOf(CancellationException.class);
    }

    @Test
    void aRunThatWroteNothingHasNothingToSay() throws Exception {
        run.stop();
        assertThat(run.remove(1)).as("no line, no connection to the store").isNull();
    }
}

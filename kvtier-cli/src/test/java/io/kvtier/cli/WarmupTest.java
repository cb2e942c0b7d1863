package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import org.junit.jupiter.api.Test;

class WarmupTest {

    @Test
    void aWarmUpGeneratesItsTokensThenLeavesNoThreadAndNoFileBehind() {
        Warmup w = Warmup.startNew();
        int generated = w.finish(Warmup.MIN_TOKENS_TO_WAIT, Long.MAX_VALUE);

        assertThat(generated).isEqualTo(Warmup.TOKENS);
        assertThat(w.directory()).isNotNull();
        assertThat(Files.exists(w.directory())).as("temporary model directory %s deleted", w.directory()).isFalse();
    }

    @Test
    void aSmallJobDoesNotWaitButStopsTheWarmUpBeforeItRuns() {
        Warmup w = Warmup.startNew();
        int generated = w.finish(Warmup.MIN_TOKENS_TO_WAIT - 1, Long.MAX_VALUE);

        // Stopped at its next step: far fewer than its tokens (its first step is still being compiled).
        assertThat(generated).isLessThan(Warmup.TOKENS);
        if (w.directory() != null) {
            assertThat(Files.exists(w.directory())).isFalse();
        }
    }
}

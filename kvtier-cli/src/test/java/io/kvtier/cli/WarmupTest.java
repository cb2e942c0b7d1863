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
        // A new engine per request, as each generate has one: 512 tokens, two requests of 256.
        assertThat(w.engines()).isEqualTo(Warmup.TOKENS / Warmup.TOKENS_PER_REQUEST).isEqualTo(2);
        assertThat(w.directory()).isNotNull();
        assertThat(Files.exists(w.directory())).as("temporary model directory %s deleted", w.directory()).isFalse();
    }

    @Test
    void aSmallJobDoesNotWaitButStopsTheWarmUp() throws InterruptedException {
        Warmup w = Warmup.startNew();
        w.finish(Warmup.MIN_TOKENS_TO_WAIT - 1, Long.MAX_VALUE);
        w.awaitEnd();

        // Stopped at its next stage or step: nowhere near its tokens (its model was still being written).
        assertThat(w.finish(Warmup.MIN_TOKENS_TO_WAIT - 1, 0)).isLessThan(Warmup.TOKENS);
        if (w.directory() != null) {
            assertThat(Files.exists(w.directory())).as("temporary model directory %s deleted", w.directory()).isFalse();
        }
    }
}

package io.kvtier.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.engine.ReferenceRecords.Record;
import io.kvtier.kv.ExtraKeys;
import io.kvtier.model.Checkpoint;
import io.kvtier.model.Kernels;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** Several stop tokens (EOS and end-of-turn tokens): generation ends at the first one sampled. */
class StopTokensTest {

    @Test
    void generationEndsAtAnyStopToken() {
        Record ref = ReferenceRecords.load().get(1);
        int[] expected = ref.expectedOutput();
        int stopAt = 5;
        int extra = expected[stopAt];
        assertThat(Arrays.copyOf(expected, stopAt)).doesNotContain(extra);
        EngineConfig config = EngineConfig.of(16, 64).withStopTokens(1, extra);
        assertThat(config.isStopToken(1)).isTrue();
        assertThat(config.isStopToken(extra)).isTrue();
        assertThat(config.isStopToken(2)).isFalse();
        assertThat(EngineConfig.of(16, 64).withStopTokens().isStopToken(1)).isFalse();
        try (Engine e = LlamaRunner.engine(Checkpoint.load(ReferenceRecords.model()), config, Kernels.best(), 2)) {
            Request r = new Request(0, ref.promptIds(), ref.maxTokens(), SamplingParams.GREEDY, ExtraKeys.NONE);
            e.submit(r);
            e.runToCompletion();
            assertThat(r.outputIds()).containsExactly(Arrays.copyOf(expected, stopAt));
            assertThat(r.finishReason()).isEqualTo(FinishReason.STOP);
        }
    }
}

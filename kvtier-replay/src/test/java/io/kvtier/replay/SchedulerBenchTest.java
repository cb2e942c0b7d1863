package io.kvtier.replay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The scheduler bench ends for every budget that can decode its batch, and refuses the rest. */
class SchedulerBenchTest {

    /**
     * A budget equal to the batch: the first requests decode while the last ones prefill a token or
     * two a step. Before the fix they finished (their output cap assumed a budget-sized prefill),
     * the batch never became whole again and the prefill loop spun forever.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aBudgetEqualToTheBatchEndsWithEveryRequestDecoding() {
        SchedulerBench.Result r = SchedulerBench.run(16, 64, 20, 16, 16, 1);
        assertThat(r.tokensPerStep()).as("every running request decodes in each measured step").isEqualTo(16.0);
        assertThat(r.nanosPerStep()).isPositive();
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void promptsLongerThanTheBudgetAndOneRequestEnd() {
        assertThat(SchedulerBench.run(4, 100, 10, 4, 5, 1).tokensPerStep()).isEqualTo(4.0);
        assertThat(SchedulerBench.run(1, 1, 5, 1, 1, 1).tokensPerStep()).isEqualTo(1.0);
    }

    @Test
    void aBudgetBelowTheBatchIsRefused() {
        assertThatThrownBy(() -> SchedulerBench.run(16, 64, 20, 16, 15, 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("a step's budget of 15 tokens cannot decode 16 running requests at once");
    }

    @Test
    void thePrefillBoundCountsTheBudgetLeftByTheDecodingRequests() {
        // Request k gets the budget less the k decoding before it: ceil(P / (B - k)) steps, plus one each.
        assertThat(SchedulerBench.prefillStepsBound(2, 10, 4)).isEqualTo((3 + 1) + (4 + 1));
        assertThat(SchedulerBench.prefillStepsBound(256, 1024, 8192)).isEqualTo(512);
        assertThat(SchedulerBench.prefillStepsBound(256, 1024, 256)).isEqualTo(6656);
    }
}

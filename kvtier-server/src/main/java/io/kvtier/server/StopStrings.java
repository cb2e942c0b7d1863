package io.kvtier.server;

import io.kvtier.engine.StopCondition;
import java.util.List;

/**
 * OpenAI's {@code stop} strings as the engine's {@link StopCondition}: the engine ends the request
 * with {@code stop} in the step whose token completes one of them (also across token boundaries
 * and inside multi-byte characters), so the response's {@code finish_reason}, its usage and the
 * {@code vllm:request_success} metric all read the engine's one decision. The I/O thread's own
 * {@link TextStreamer} cuts the text at the same token (same tokens, same rule). Engine thread only.
 */
final class StopStrings implements StopCondition {

    private final TextStreamer text;

    /** @param lastPromptToken the prompt's last id (decoding the first piece depends on it) */
    StopStrings(ModelText model, List<String> stops, int lastPromptToken) {
        if (stops.isEmpty()) {
            throw new IllegalArgumentException("no stop strings: use StopCondition.NONE");
        }
        this.text = new TextStreamer(model, stops, lastPromptToken);
    }

    @Override
    public boolean stopsAfter(int token) {
        text.accept(new int[] {token});
        return text.stopped();
    }
}

package io.kvtier.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.engine.ReferenceRecords.Record;
import io.kvtier.kv.ExtraKeys;
import java.util.ArrayList;
import java.util.List;

/** Runs reference records through an engine one after another, checking every output. */
final class SequentialRuns {

    private static final List<Record> RECORDS = ReferenceRecords.load();

    private SequentialRuns() {
    }

    /**
     * Runs the records in order, the device prefix cache dropped before each (so hits come from
     * the offload tiers), transfers drained after each; asserts each output is the reference's
     * and the offload invariants hold.
     */
    static List<Request> run(Engine e, int... records) {
        List<Request> done = new ArrayList<>();
        for (int i : records) {
            Record rec = RECORDS.get(i);
            e.resetDevicePrefixCache();
            Request r = new Request(i, rec.promptIds(), rec.maxTokens(), SamplingParams.GREEDY, ExtraKeys.NONE);
            e.submit(r);
            e.runToCompletion();
            e.drainTransfers();
            assertThat(r.outputIds()).as("record %d", i).containsExactly(rec.expectedOutput());
            e.offload().checkInvariants();
            done.add(r);
        }
        return done;
    }
}

package io.kvtier.telemetry;

import io.kvtier.engine.Engine;
import io.kvtier.engine.EngineConfig;
import io.kvtier.engine.LlamaRunner;
import io.kvtier.engine.OffloadSetup;
import io.kvtier.engine.ReferenceRecords;
import io.kvtier.engine.Request;
import io.kvtier.engine.SamplingParams;
import io.kvtier.kv.ExtraKeys;
import io.kvtier.model.Checkpoint;
import io.kvtier.model.Kernels;
import io.kvtier.model.Tokenizer;
import io.kvtier.offload.OffloadConfig;
import io.kvtier.tier.KvEvents;
import java.util.List;

/** Real engines on stories260K for the telemetry tests, and a way to run the reference prompts through them. */
final class TestEngines {

    static final String MODEL = "stories260K";

    private TestEngines() {
    }

    /** stories260K with {@code deviceBlocks} blocks of 16 and a host tier of {@code hostBytes}, reporting to {@code events}. */
    static Engine engine(int deviceBlocks, long hostBytes, KvEvents events) {
        return engine(deviceBlocks, hostBytes, 1, events);
    }

    /** The same with chunks of {@code blocksPerChunk} blocks in the host tier. */
    static Engine engine(int deviceBlocks, long hostBytes, int blocksPerChunk, KvEvents events) {
        return engine(deviceBlocks, new OffloadSetup(hostBytes, 0, "lru", OffloadConfig.DEFAULT.withBlocksPerChunk(blocksPerChunk)), events);
    }

    /** stories260K with {@code deviceBlocks} blocks of 16 and these offload tiers. */
    static Engine engine(int deviceBlocks, OffloadSetup offload, KvEvents events) {
        Checkpoint cp = Checkpoint.load(ReferenceRecords.model());
        EngineConfig ec = new EngineConfig(16, deviceBlocks, 512, EngineConfig.DEFAULT_MAX_RUNNING, true, Tokenizer.BOS);
        return LlamaRunner.engine(cp, ec, Kernels.best(), 2, offload, events);
    }

    /** Runs every reference record once (all at once), then applies every transfer; returns the requests. */
    static List<Request> runRecords(Engine e, long firstId) {
        List<ReferenceRecords.Record> recs = ReferenceRecords.load();
        for (int i = 0; i < recs.size(); i++) {
            ReferenceRecords.Record r = recs.get(i);
            e.submit(new Request(firstId + i, r.promptIds(), r.maxTokens(), SamplingParams.GREEDY, ExtraKeys.NONE));
        }
        List<Request> done = e.runToCompletion();
        e.drainTransfers();
        return done;
    }
}

package io.kvtier.cli;

import io.kvtier.engine.Engine;
import io.kvtier.engine.EngineConfig;
import io.kvtier.engine.LlamaRunner;
import io.kvtier.engine.OffloadSetup;
import io.kvtier.model.Kernels;
import io.kvtier.server.EngineLoop;
import io.kvtier.server.OpenAiServer;
import io.kvtier.server.ServerConfig;
import io.kvtier.server.ServerTelemetry;
import io.kvtier.telemetry.ServeMetrics;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;

/**
 * A server that {@code bench serve} starts for one side of its comparison: the engine on the model
 * (GGUF or llama2.c checkpoint, opened as {@code serve} opens it), with or without a host tier, in an {@link EngineLoop}, the {@link OpenAiServer} over
 * it on a free loopback port, and its metrics at {@code /metrics}.
 */
final class BenchServer implements AutoCloseable {

    /** The model name the server answers to. */
    static final String MODEL = "bench";

    private final OpenAiServer server;

    /**
     * @param offload the offload tiers ({@link OffloadSetup#OFF} for none)
     * @param threads compute threads (0 = one per core)
     */
    BenchServer(Path model, TokenizerOptions tokenizer, EngineConfig config, OffloadSetup offload, int threads) {
        ServedModel served = ServedModel.open(model, tokenizer, MODEL);
        // The stop tokens serve would use on this model (llama2.c: BOS; GGUF: its end-of-generation tokens).
        Engine engine = LlamaRunner.engine(served.model(), config.withStopTokens(served.stopTokenIds()), Kernels.best(), threads,
                offload);
        ServerTelemetry telemetry = new ServerTelemetry(new ServeMetrics(MODEL, engine.snapshot()), null, null);
        EngineLoop loop = new EngineLoop(engine, 1024);
        this.server = new OpenAiServer(ServerConfig.loopback(0), loop, served.text());
        telemetry.install(loop, server);
        loop.start();
        try {
            server.start();
        } catch (IOException e) {
            loop.shutdown(Duration.ZERO);
            throw new UncheckedIOException(e);
        }
    }

    String url() {
        return "http://127.0.0.1:" + server.port();
    }

    @Override
    public void close() {
        server.stop();
    }
}

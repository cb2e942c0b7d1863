package io.kvtier.cli;

import io.kvtier.engine.Engine;
import io.kvtier.engine.EngineConfig;
import io.kvtier.engine.LlamaRunner;
import io.kvtier.engine.OffloadSetup;
import io.kvtier.model.Model;
import io.kvtier.model.Kernels;
import io.kvtier.server.EngineLoop;
import io.kvtier.server.TokenizerModelText;
import io.kvtier.server.OpenAiServer;
import io.kvtier.server.ServerConfig;
import io.kvtier.server.ServerTelemetry;
import io.kvtier.tier.KvEvents;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * {@code ./kvtier serve}: the OpenAI-compatible HTTP server over the engine (docs/serving.md).
 * Runs until SIGTERM or Ctrl-C, then stops gracefully: requests in flight may finish within
 * {@code --shutdown-grace}, the rest are aborted, the tiers are closed.
 */
@Command(name = "serve", mixinStandardHelpOptions = true, defaultValueProvider = ServeCommand.Defaults.class,
        description = "Serve the model over an OpenAI-compatible HTTP API (completions, chat, streaming).")
final class ServeCommand implements Callable<Integer> {

    @Mixin
    ServeOptions serve;

    @Mixin
    ModelOptions model;

    @Mixin
    TokenizerOptions tokenizer;

    @Mixin
    BatchOptions batch;

    @Mixin
    EngineOptions engineOptions;

    @Mixin
    ThreadsOptions threads;

    @Mixin
    InvarianceOptions invariance;

    @Mixin
    OffloadOptions offload;

    @Mixin
    EvictionOptions eviction;

    @Mixin
    DiskOptions disk;

    @Mixin
    RemoteOptions remote;

    @Mixin
    KvEventsOptions kvEvents;

    static final class Defaults extends FlagDefaults {
        Defaults() {
            super(java.util.Map.of("--block-size", "16", "--max-batch-tokens", "512",
                    "--max-running", String.valueOf(EngineConfig.DEFAULT_MAX_RUNNING)));
        }
    }

    @Override
    public Integer call() throws IOException, InterruptedException {
        invariance.apply();
        ServerConfig config = serve.config();
        batch.check();
        engineOptions.check();
        threads.threads();
        kvEvents.validate();
        offload.check(eviction, disk); // as generate does: every offload and disk flag, before the model loads
        boolean terminal = System.console() != null && System.console().isTerminal();
        OffloadSetup offloadSetup = remote.addTo(offload.setup(eviction, disk, terminal));
        Path modelPath = model.model();
        String name = serve.modelName(modelPath);
        OffloadOptions.checkKvGroups(offloadSetup, modelPath);
        ServedModel served = ServedModel.open(modelPath, tokenizer, name);
        Model checkpoint = served.model();
        TokenizerModelText text = served.text();
        try {
            offload.fitChunk(batch, offloadSetup.enabled(), checkpoint.config().seqLen());
        } catch (RuntimeException e) {
            served.close();
            throw e;
        }
        KvEvents events = kvEvents.events();
        Engine engine = LlamaRunner.engine(checkpoint, engineOptions.config(checkpoint, batch, -1).withStopTokens(text.stopTokenIds()).withPrefillPriority(offload.prefillPriority(offloadSetup.enabled())), Kernels.best(),
                threads.threads(), offloadSetup, events);
        disk.opened(engine, terminal);
        disk.warnRoom();
        ServerTelemetry telemetry;
        try {
            telemetry = kvEvents.telemetry(name, engine, events, disk.roomNote(engine));
        } catch (RuntimeException e) {
            engine.close();
            throw e;
        }
        EngineLoop loop = new EngineLoop(engine, serve.maxWaiting());
        OpenAiServer server = new OpenAiServer(config, loop, text);
        telemetry.install(loop, server);
        loop.start();
        try {
            server.start();
        } catch (IOException | RuntimeException e) {
            // In use, or an address this machine cannot bind: one line, exit 2, nothing left running.
            loop.shutdown(java.time.Duration.ZERO);
            telemetry.close();
            throw new BadInputException("cannot listen on " + config.host() + ":" + config.port() + ": " + e.getMessage());
        }
        // After the "serving" line: a refused start says only why, and the first line says where it serves.
        return runUntilStopped(server, config, telemetry, () -> {
            String note = loop.contextLimit().startNote();
            if (note != null) {
                System.err.println("kvtier: serve: " + note);
            }
            threads.warnIfOversubscribed("serve");
        });
    }

    /**
     * Blocks until SIGTERM/Ctrl-C (exit by the JVM's hook) or until the engine thread dies (exit 1:
     * a bug); {@code notes} prints its lines after the "serving" line.
     */
    private static int runUntilStopped(OpenAiServer server, ServerConfig config, ServerTelemetry telemetry, Runnable notes)
            throws InterruptedException {
        CountDownLatch stopped = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            System.err.println("kvtier: stopping: requests in flight may finish for " + config.shutdownGrace().toMillis() / 1000.0 + " s");
            server.stop();
            telemetry.close(); // after the engine loop: its last KV events are sent
            System.err.println("kvtier: stopped");
            stopped.countDown();
        }, "kvtier-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        System.err.println("kvtier: serving " + server.model().modelName() + " on http://" + (config.host().contains(":") ? "[" + config.host() + "]" : config.host()) + ":" + server.port()
                + "/v1 (SIGTERM or Ctrl-C stops)");
        notes.run();
        while (server.loop().alive()) {
            if (stopped.await(500, java.util.concurrent.TimeUnit.MILLISECONDS)) {
                return 0;
            }
        }
        if (stopped.getCount() > 0 && server.loop().deathCause() != null) {
            Runtime.getRuntime().removeShutdownHook(hook);
            server.stop();
            telemetry.close();
            System.err.println("kvtier: the engine thread failed (a bug): " + server.loop().deathCause());
            return 1;
        }
        stopped.await();
        return 0;
    }
}

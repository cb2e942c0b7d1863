package io.kvtier.cli;

import io.kvtier.engine.Engine;
import io.kvtier.server.ServerTelemetry;
import io.kvtier.telemetry.KvEventEncoder;
import io.kvtier.telemetry.KvEventPublisher;
import io.kvtier.telemetry.ServeMetrics;
import io.kvtier.tier.KvEvents;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The KV event flags of {@code serve} (a picocli mixin) and the server telemetry they configure:
 * metrics always, a ZMQ publisher of vLLM-format KV events when {@code --kv-events-endpoint} is given.
 */
final class KvEventsOptions {

    @Spec(Spec.Target.MIXEE)
    CommandSpec mixee;

    @Option(names = "--kv-events-endpoint", paramLabel = "ADDR",
            description = "publish KV events (vLLM's ZMQ format) on a PUB socket bound here, e.g. tcp://127.0.0.1:5557 (default: off)")
    String endpoint;

    @Option(names = "--kv-events-replay-endpoint", paramLabel = "ADDR",
            description = "also bind vLLM's replay ROUTER socket here, e.g. tcp://127.0.0.1:5558")
    String replayEndpoint;

    @Option(names = "--kv-events-topic", defaultValue = "", paramLabel = "TOPIC",
            description = "topic frame of every KV event batch (default: empty)")
    String topic;

    @Option(names = "--kv-events-block-hash", defaultValue = "int", paramLabel = "int|bytes",
            description = "block keys as vLLM's 64-bit ints (the key's last 8 bytes; default) or as their 32 bytes")
    String blockHash;

    /**
     * Checks the flags (before anything is built).
     *
     * @throws BadInputException on another KV event flag without {@code --kv-events-endpoint}, or an
     *         unknown hash format
     */
    void validate() {
        Checks.needs(mixee, endpoint != null, "--kv-events-endpoint", "--kv-events-replay-endpoint", "--kv-events-topic",
                "--kv-events-block-hash");
        hashFormat();
    }

    /** The KvEvents to build the engine with: buffered when events are published, else null. */
    KvEvents events() {
        return endpoint == null ? null : KvEvents.buffered();
    }

    /**
     * The server's telemetry over {@code engine} (built with {@link #events()}); {@code diskRoomNote}
     * goes into the disk tier's capacity metric ({@link ServeMetrics}).
     *
     * @throws BadInputException if a socket cannot be bound
     */
    ServerTelemetry telemetry(String modelName, Engine engine, KvEvents events, String diskRoomNote) {
        ServeMetrics metrics = new ServeMetrics(modelName, engine.snapshot(), diskRoomNote);
        if (endpoint == null) {
            return new ServerTelemetry(metrics, null, null);
        }
        KvEventPublisher publisher;
        try {
            publisher = new KvEventPublisher(new KvEventPublisher.Config(endpoint, replayEndpoint, topic),
                    KvEventEncoder.forEngine(engine, hashFormat()));
        } catch (IllegalArgumentException e) {
            throw new BadInputException(e.getMessage());
        }
        return new ServerTelemetry(metrics, events, publisher);
    }

    private KvEventEncoder.HashFormat hashFormat() {
        return switch (blockHash) {
            case "int" -> KvEventEncoder.HashFormat.INT;
            case "bytes" -> KvEventEncoder.HashFormat.BYTES;
            default -> throw new BadInputException("--kv-events-block-hash must be int or bytes, got '" + blockHash + "'");
        };
    }
}

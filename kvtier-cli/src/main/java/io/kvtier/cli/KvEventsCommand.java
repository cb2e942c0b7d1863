package io.kvtier.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.PrintStream;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.concurrent.Callable;
import org.msgpack.core.MessageFormat;
import org.msgpack.core.MessageUnpacker;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code ./kvtier kv-events}: watches the KV events of a server started with
 * {@code --kv-events-endpoint}, as a router would: it subscribes, then (with the replay socket)
 * prints every batch the server still buffers, then the live ones, fetching from the replay socket
 * any it missed (a subscriber misses what was sent before its subscription arrived); each batch as
 * one JSON line {@code {"seq", "ts", "events", "rank"}} in sequence order, never twice (the msgpack
 * payload decoded as it is: maps stay maps, binary hashes become hex strings).
 */
@Command(name = "kv-events", mixinStandardHelpOptions = true,
        description = "Print a server's KV events (vLLM's ZMQ format) as JSON lines, replaying what came before.")
final class KvEventsCommand implements Callable<Integer> {

    @Option(names = "--kv-events-endpoint", required = true, paramLabel = "ADDR",
            description = "the server's PUB address, e.g. tcp://127.0.0.1:5557")
    String endpoint;

    @Option(names = "--kv-events-replay-endpoint", paramLabel = "ADDR",
            description = "the server's replay address, e.g. tcp://127.0.0.1:5558: batches sent before this command joined, and gaps, are fetched from it")
    String replayEndpoint;

    @Option(names = "--kv-events-topic", defaultValue = "", paramLabel = "TOPIC",
            description = "the topic to subscribe to (default: every topic)")
    String topic;

    @Option(names = "--count", paramLabel = "N", description = "stop after N batches (default: until Ctrl-C)")
    Long countFlag;

    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * How long the first batch may be awaited before one line says none came yet: ZMQ connects
     * without telling whether anything publishes at the address, so a wrong address would
     * otherwise wait in silence. Milliseconds; the property is for tests.
     */
    static final String QUIET_NOTICE_PROPERTY = "kvtier.kvEvents.quietNoticeMillis";

    /** A request unanswered this long is sent again on a new connection, until {@link #REPLAY_ATTEMPTS} were sent. */
    static final int REPLAY_RETRY_MS = 2_000;
    static final int REPLAY_ATTEMPTS = 5;

    /** The replay socket (a DEALER with a fresh identity), connected; null without --kv-events-replay-endpoint. */
    private ZMQ.Socket replay;
    /** The next sequence to print; -1 until one is known. */
    private long next = -1;
    private long printed;
    private long count;

    @Override
    public Integer call() {
        count = countFlag == null ? Long.MAX_VALUE : Checks.atLeast(countFlag, 1, "--count");
        PrintStream out = System.out;
        try (ZContext ctx = io.kvtier.telemetry.ZmqErrors.context()) {
            ctx.setLinger(0); // nothing is sent that must outlive the command
            ZMQ.Socket sub = ctx.createSocket(SocketType.SUB);
            sub.subscribe(topic.getBytes(StandardCharsets.UTF_8));
            connect(sub, endpoint, "--kv-events-endpoint");
            if (replayEndpoint != null) {
                replay = replaySocket(ctx);
                replay(ctx, 0, out); // what was sent before this command started
            }
            sub.setReceiveTimeOut(Integer.getInteger(QUIET_NOTICE_PROPERTY, 5_000));
            boolean waitingForFirst = true;
            while (printed < count) {
                byte[][] msg = frames(sub, 3);
                if (msg == null && waitingForFirst && !Thread.currentThread().isInterrupted()) {
                    System.err.println("kvtier: subscribed to " + endpoint + "; no batch yet (nothing publishes there, or the server"
                            + " is idle: serve publishes with --kv-events-endpoint" + (topic.isEmpty() ? "" : ", or its topic"
                            + " does not start with '" + topic + "': serve's --kv-events-topic") + "); waiting");
                    waitingForFirst = false;
                    sub.setReceiveTimeOut(-1);
                    continue;
                }
                if (msg == null) {
                    break; // interrupted (Ctrl-C)
                }
                if (waitingForFirst) {
                    waitingForFirst = false;
                    sub.setReceiveTimeOut(-1);
                }
                long seq = ByteBuffer.wrap(msg[1]).getLong();
                if (next >= 0 && seq > next) {
                    // Batches next .. seq-1 went by before the subscription took effect, or were dropped.
                    if (replay != null) {
                        replay(ctx, next, out);
                    } else {
                        System.err.println("kvtier: batches " + next + ".." + (seq - 1)
                                + " were missed (give --kv-events-replay-endpoint to fetch them)");
                    }
                }
                emit(out, seq, msg[2]);
            }
        }
        return 0;
    }

    private static void connect(ZMQ.Socket s, String address, String flag) {
        try {
            s.connect(address);
        } catch (RuntimeException e) {
            throw new BadInputException(flag + " " + address + ": cannot connect: " + io.kvtier.telemetry.ZmqErrors.describe(e));
        }
    }

    /** Prints a batch unless it was printed already; batches arrive in sequence order from both sockets. */
    private void emit(PrintStream out, long seq, byte[] payload) {
        if ((next >= 0 && seq < next) || printed >= count) {
            return;
        }
        print(out, seq, payload);
        printed++;
        next = seq + 1;
    }

    private ZMQ.Socket replaySocket(ZContext ctx) {
        ZMQ.Socket dealer = ctx.createSocket(SocketType.DEALER);
        dealer.setReceiveTimeOut(REPLAY_RETRY_MS);
        connect(dealer, replayEndpoint, "--kv-events-replay-endpoint");
        return dealer;
    }

    /**
     * Asks the replay socket for every buffered batch from {@code from} on and prints the new ones.
     * A request that gets no answer in {@link #REPLAY_RETRY_MS} is asked again, from the first batch
     * not printed yet, on a new connection: a request can be lost with its connection (CI saw one in
     * ~50 runs wait 10 s for nothing), and a new identity never reads the late answer to the old one.
     *
     * @throws BadInputException after {@link #REPLAY_ATTEMPTS} unanswered requests
     */
    private void replay(ZContext ctx, long from, PrintStream out) {
        for (int attempt = 1; ; attempt++) {
            replay.sendMore(new byte[0]);
            replay.send(ByteBuffer.allocate(8).putLong(next >= 0 ? Math.max(from, next) : from).array());
            while (true) {
                byte[][] msg = frames(replay, 4);
                if (msg == null) {
                    break;
                }
                long seq = ByteBuffer.wrap(msg[2]).getLong();
                if (seq == -1) {
                    return;
                }
                emit(out, seq, msg[3]);
            }
            if (attempt == REPLAY_ATTEMPTS || Thread.currentThread().isInterrupted()) {
                throw new BadInputException("--kv-events-replay-endpoint: no answer within "
                        + REPLAY_ATTEMPTS * REPLAY_RETRY_MS / 1000 + " s");
            }
            ctx.destroySocket(replay);
            replay = replaySocket(ctx);
        }
    }

    /** One multipart message of {@code want} frames, or null on a timeout or interrupt. */
    private static byte[][] frames(ZMQ.Socket s, int want) {
        byte[] first = s.recv();
        if (first == null) {
            return null;
        }
        byte[][] out = new byte[want][];
        out[0] = first;
        for (int i = 1; i < want; i++) {
            if (!s.hasReceiveMore()) {
                throw new BadInputException("a KV event message has " + i + " frames, expected " + want + ": is this a kvtier or vLLM endpoint?");
            }
            out[i] = s.recv();
        }
        while (s.hasReceiveMore()) {
            s.recv();
        }
        return out;
    }

    private static void print(PrintStream out, long seq, byte[] payload) {
        ObjectNode line = JsonNodeFactory.instance.objectNode();
        line.put("seq", seq);
        try (MessageUnpacker u = io.kvtier.telemetry.MsgPack.unpacker(payload)) {
            JsonNode batch = value(u);
            line.set("ts", batch.get(0));
            line.set("events", batch.get(1));
            line.set("rank", batch.get(2));
        } catch (IOException | RuntimeException e) {
            line.put("error", "undecodable payload: " + e.getMessage());
        }
        try {
            out.println(JSON.writeValueAsString(line));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static JsonNode value(MessageUnpacker u) throws IOException {
        MessageFormat f = u.getNextFormat();
        JsonNodeFactory n = JsonNodeFactory.instance;
        return switch (f.getValueType()) {
            case NIL -> {
                u.unpackNil();
                yield n.nullNode();
            }
            case BOOLEAN -> n.booleanNode(u.unpackBoolean());
            case INTEGER -> {
                BigInteger v = u.unpackBigInteger();
                yield n.numberNode(v);
            }
            case FLOAT -> n.numberNode(u.unpackDouble());
            case STRING -> n.textNode(u.unpackString());
            case BINARY -> n.textNode(HexFormat.of().formatHex(u.readPayload(u.unpackBinaryHeader())));
            case ARRAY -> {
                ArrayNode a = n.arrayNode();
                for (int i = u.unpackArrayHeader(); i > 0; i--) {
                    a.add(value(u));
                }
                yield a;
            }
            case MAP -> {
                ObjectNode o = n.objectNode();
                for (int i = u.unpackMapHeader(); i > 0; i--) {
                    o.set(u.unpackString(), value(u));
                }
                yield o;
            }
            case EXTENSION -> throw new IOException("msgpack extension types are not part of KV events");
        };
    }
}

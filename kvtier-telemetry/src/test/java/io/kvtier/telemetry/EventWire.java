package io.kvtier.telemetry;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.msgpack.core.MessageFormat;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;

/**
 * Decodes KV event payloads with msgpack-java's low-level {@link MessageUnpacker}, independently of
 * {@link KvEventEncoder}: every msgpack value becomes a plain Java value (array: List, map:
 * LinkedHashMap in wire order, integer: BigInteger, float: Double, string: String, binary: hex
 * String, nil: null), and {@link State} applies decoded batches the way a KV-aware router does.
 */
public final class EventWire {

    private EventWire() {
    }

    /** The whole payload as plain Java values; throws if bytes are left over. */
    public static Object decode(byte[] payload) {
        try (MessageUnpacker u = MessagePack.newDefaultUnpacker(payload)) {
            Object v = value(u);
            if (u.hasNext()) {
                throw new IllegalArgumentException("bytes left after the payload");
            }
            return v;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Object value(MessageUnpacker u) throws IOException {
        MessageFormat f = u.getNextFormat();
        return switch (f.getValueType()) {
            case NIL -> {
                u.unpackNil();
                yield null;
            }
            case BOOLEAN -> u.unpackBoolean();
            case INTEGER -> u.unpackBigInteger();
            case FLOAT -> {
                if (f != MessageFormat.FLOAT64) {
                    throw new IllegalArgumentException("expected float64, got " + f);
                }
                yield u.unpackDouble();
            }
            case STRING -> u.unpackString();
            case BINARY -> HexFormat.of().formatHex(u.readPayload(u.unpackBinaryHeader()));
            case ARRAY -> {
                int n = u.unpackArrayHeader();
                List<Object> out = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    out.add(value(u));
                }
                yield out;
            }
            case MAP -> {
                int n = u.unpackMapHeader();
                Map<Object, Object> out = new LinkedHashMap<>();
                for (int i = 0; i < n; i++) {
                    Object k = value(u);
                    if (out.put(k, value(u)) != null) {
                        throw new IllegalArgumentException("map key " + k + " twice");
                    }
                }
                yield out;
            }
            case EXTENSION -> throw new IllegalArgumentException("unexpected extension value");
        };
    }

    /** A (medium, block hash) pair a router would index. */
    public record Held(String medium, Object hash) {
    }

    /**
     * What a router knows after applying batches in sequence order: the set of (medium, hash) held.
     * {@code BlockStored} adds its hashes under its medium, {@code BlockRemoved} removes them,
     * {@code AllBlocksCleared} empties every medium.
     */
    public static final class State {
        private final Set<Held> held = new HashSet<>();
        private long nextSeq;

        /** Applies the batch with sequence number {@code seq}; throws on a gap or a repeat. */
        @SuppressWarnings("unchecked")
        public void apply(long seq, byte[] payload) {
            if (seq != nextSeq) {
                throw new IllegalStateException("batch " + seq + " after " + (nextSeq - 1) + ": a gap or a repeat");
            }
            nextSeq++;
            List<Object> batch = (List<Object>) decode(payload);
            for (Object o : (List<Object>) batch.get(1)) {
                Map<String, Object> e = (Map<String, Object>) o;
                switch ((String) e.get("type")) {
                    case "BlockStored" -> ((List<Object>) e.get("block_hashes")).forEach(h -> held.add(new Held((String) e.get("medium"), h)));
                    case "BlockRemoved" -> ((List<Object>) e.get("block_hashes")).forEach(h -> held.remove(new Held((String) e.get("medium"), h)));
                    case "AllBlocksCleared" -> held.clear();
                    default -> throw new IllegalArgumentException("unknown event type " + e.get("type"));
                }
            }
        }

        public Set<Held> held() {
            return Set.copyOf(held);
        }

        /** The hashes held under one medium. */
        public Set<Object> hashes(String medium) {
            Set<Object> out = new HashSet<>();
            for (Held h : held) {
                if (h.medium().equals(medium)) {
                    out.add(h.hash());
                }
            }
            return out;
        }

        public long nextSeq() {
            return nextSeq;
        }
    }

    /** The frames of one multipart message, or null when the socket's receive timeout passed first. */
    public static List<byte[]> recv(org.zeromq.ZMQ.Socket s) {
        byte[] first = s.recv();
        if (first == null) {
            return null;
        }
        List<byte[]> frames = new ArrayList<>(List.of(first));
        while (s.hasReceiveMore()) {
            frames.add(s.recv());
        }
        return frames;
    }

    /** An unsigned 64-bit value as the decoder yields it. */
    public static BigInteger u64(long v) {
        return new BigInteger(Long.toUnsignedString(v));
    }
}

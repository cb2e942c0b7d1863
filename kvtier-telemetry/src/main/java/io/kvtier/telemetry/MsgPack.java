package io.kvtier.telemetry;

import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;

/**
 * msgpack-java on its pure {@link java.nio.ByteBuffer} code path. By default msgpack-java's
 * {@code MessageBuffer} reads and writes through {@code sun.misc.Unsafe} (JDK 24+ prints four
 * warnings on its first use, and the project uses nothing built on it); the system property
 * {@value #UNIVERSAL_BUFFER} {@code = true}, read once when {@code MessageBuffer} is initialised,
 * makes it use {@code MessageBufferU} instead, which never touches {@code Unsafe}. Every packer
 * and unpacker of kvtier comes from here, so the property is set before msgpack's first use.
 */
public final class MsgPack {

    /** msgpack-java's switch to its ByteBuffer-only buffers. */
    public static final String UNIVERSAL_BUFFER = "msgpack.universal-buffer";

    static {
        System.setProperty(UNIVERSAL_BUFFER, "true");
    }

    private MsgPack() {
    }

    /** A packer into memory. */
    public static MessageBufferPacker packer() {
        return MessagePack.newDefaultBufferPacker();
    }

    /** An unpacker of {@code payload}. */
    public static MessageUnpacker unpacker(byte[] payload) {
        return MessagePack.newDefaultUnpacker(payload);
    }
}

package io.kvtier.tier.remote;

import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.output.CommandOutput;
import java.nio.ByteBuffer;
import java.util.function.Function;

/** The reply of a GET handed to a sink as it is decoded; null (the key is absent) if no bulk string came. */
final class SinkOutput<T> extends CommandOutput<String, byte[], T> {
    private final Function<ByteBuffer, T> sink;
    private boolean set;

    SinkOutput(RedisCodec<String, byte[]> codec, Function<ByteBuffer, T> sink) {
        super(codec, null);
        this.sink = sink;
    }

    @Override
    public void set(ByteBuffer bytes) {
        set = true;
        apply(bytes);
    }

    @Override
    public void complete(int depth) {
        if (!set && !hasError()) {
            set = true;
            apply(null);
        }
    }

    /** A sink that throws fails its command, never the connection's decoding. */
    private void apply(ByteBuffer bytes) {
        try {
            output = sink.apply(bytes);
        } catch (RuntimeException e) {
            setError("ERR the value's sink failed: " + e);
        }
    }
}

package io.kvtier.tier.remote;

import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.codec.ToByteBufEncoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.nio.ByteBuffer;

/**
 * The remote store's codec: UTF-8 string keys, byte-array values (a chunk's header and payload).
 * It writes a value straight into the command's buffer, grown once to the value's size: through
 * {@code RedisCodec.of(StringCodec, ByteArrayCodec)} Lettuce wrapped each value in a
 * {@link ByteBuffer} and copied it into a buffer that starts at 256 bytes and doubles (a 4 MiB
 * value was copied about twice over before it reached the socket; a JFR profile of
 * {@code bench offload --remote-url} had that encoding as the hottest frame).
 */
final class ChunkCodec implements RedisCodec<String, byte[]>, ToByteBufEncoder<String, byte[]> {

    static final ChunkCodec INSTANCE = new ChunkCodec();

    private ChunkCodec() {
    }

    @Override
    public void encodeKey(String key, ByteBuf target) {
        ByteBufUtil.reserveAndWriteUtf8(target, key, ByteBufUtil.utf8Bytes(key));
    }

    @Override
    public void encodeValue(byte[] value, ByteBuf target) {
        target.ensureWritable(value.length + 2); // the value and the CRLF after it: one growth at most
        target.writeBytes(value);
    }

    /** Exact: the bulk-string length written before the bytes. */
    @Override
    public int estimateSize(Object keyOrValue) {
        return keyOrValue instanceof byte[] b ? b.length : ByteBufUtil.utf8Bytes((CharSequence) keyOrValue);
    }

    @Override
    public boolean isEstimateExact() {
        return true;
    }

    @Override
    public String decodeKey(ByteBuffer bytes) {
        return StringCodec.UTF8.decodeKey(bytes);
    }

    @Override
    public byte[] decodeValue(ByteBuffer bytes) {
        return ByteArrayCodec.INSTANCE.decodeValue(bytes);
    }

    @Override
    public ByteBuffer encodeKey(String key) {
        return StringCodec.UTF8.encodeKey(key);
    }

    @Override
    public ByteBuffer encodeValue(byte[] value) {
        return ByteBuffer.wrap(value);
    }
}

package io.kvtier.tier.remote;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The codec's sizes are exact (Lettuce writes them as the bulk lengths) and its bytes are the input's. */
class ChunkCodecTest {

    @Test
    void sizesAreExactAndTheBytesAreWrittenAsGiven() {
        String key = "kvt:v1:tenant-é:0123";
        assertThat(ChunkCodec.INSTANCE.estimateSize(key)).isEqualTo(key.getBytes(StandardCharsets.UTF_8).length).isEqualTo(21);
        byte[] value = new byte[70_000];
        for (int i = 0; i < value.length; i++) {
            value[i] = (byte) (i * 31);
        }
        assertThat(ChunkCodec.INSTANCE.estimateSize(value)).isEqualTo(70_000);
        assertThat(ChunkCodec.INSTANCE.isEstimateExact()).isTrue();
        ByteBuf target = Unpooled.buffer(256);
        ChunkCodec.INSTANCE.encodeKey(key, target);
        ChunkCodec.INSTANCE.encodeValue(value, target);
        byte[] out = new byte[target.readableBytes()];
        target.readBytes(out);
        assertThat(new String(out, 0, 21, StandardCharsets.UTF_8)).isEqualTo(key);
        assertThat(java.util.Arrays.copyOfRange(out, 21, out.length)).isEqualTo(value);
        assertThat(ChunkCodec.INSTANCE.decodeValue(java.nio.ByteBuffer.wrap(value))).isEqualTo(value);
        assertThat(ChunkCodec.INSTANCE.decodeKey(ChunkCodec.INSTANCE.encodeKey(key))).isEqualTo(key);
    }
}

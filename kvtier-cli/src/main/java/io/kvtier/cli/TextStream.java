package io.kvtier.cli;

import io.kvtier.model.Tokenizer;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * The text of a token sequence, one token at a time: what {@link Tokenizer#decode(int[])} gives
 * for the whole sequence, in pieces. A character split over several byte pieces is held back
 * until it is whole; bytes that never form a character become U+FFFD, as in the whole decode.
 */
final class TextStream {

    private final Tokenizer tokenizer;
    private final CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
            .onMalformedInput(CodingErrorAction.REPLACE).onUnmappableCharacter(CodingErrorAction.REPLACE);
    private ByteBuffer pending = ByteBuffer.allocate(64);
    private int prev = -1;

    TextStream(Tokenizer tokenizer) {
        this.tokenizer = tokenizer;
    }

    /** The text that token {@code id} completes (often its piece; empty while a character is incomplete). */
    String append(int id) {
        if (id != Tokenizer.BOS) { // BOS prints nothing, as in decode
            byte[] b = tokenizer.pieceBytes(prev, id);
            if (pending.remaining() < b.length) {
                ByteBuffer bigger = ByteBuffer.allocate(Math.max(pending.capacity() * 2, pending.position() + b.length));
                bigger.put(pending.flip());
                pending = bigger;
            }
            pending.put(b);
        }
        prev = id;
        return drain(false);
    }

    /** The text of bytes still held back (U+FFFD for an incomplete character); the stream then starts over. */
    String finish() {
        String rest = drain(true);
        decoder.reset();
        pending.clear();
        prev = -1;
        return rest;
    }

    private String drain(boolean end) {
        pending.flip();
        CharBuffer out = CharBuffer.allocate(pending.remaining() + 2);
        decoder.decode(pending, out, end);
        if (end) {
            decoder.flush(out);
        }
        pending.compact();
        return out.flip().toString();
    }
}

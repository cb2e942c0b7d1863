package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.engine.ReferenceRecords;
import io.kvtier.model.Tokenizer;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Streamed text, token by token, is exactly the whole sequence's decode (byte pieces of one character included). */
class TextStreamTest {

    private static final Tokenizer TOK = Tokenizer.load(ReferenceRecords.tokenizer(), 512);

    static IntStream seeds() {
        return IntStream.rangeClosed(1, 40);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void streamedTextEqualsTheWholeDecode(long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        TextStream stream = new TextStream(TOK);
        for (int round = 0; round < 3; round++) { // the stream starts over after finish()
            int[] ids = new int[r.nextInt(0, 60)];
            for (int i = 0; i < ids.length; i++) {
                // a third byte pieces (<0x00>..<0xFF> = ids 3..258: whole, split and broken characters), BOS sometimes
                ids[i] = r.nextInt(3) == 0 ? 3 + r.nextInt(256) : r.nextInt(20) == 0 ? Tokenizer.BOS : r.nextInt(TOK.vocabSize());
            }
            StringBuilder b = new StringBuilder();
            for (int id : ids) {
                b.append(stream.append(id));
            }
            b.append(stream.finish());
            assertThat(b.toString()).as("seed %d round %d", seed, round).isEqualTo(TOK.decode(ids));
        }
    }
}

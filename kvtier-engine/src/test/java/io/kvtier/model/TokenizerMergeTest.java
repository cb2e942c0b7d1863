package io.kvtier.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Issue 14 item 4: the priority-queue merge gives run.c's tokens, in O(n log n); length bounds; NUL refused. */
class TokenizerMergeTest {

    private static Tokenizer tok;
    private static QuadraticBpeReference reference;

    @BeforeAll
    static void load() {
        tok = Tokenizer.load(SharedFiles.tok512(), 512);
        reference = new QuadraticBpeReference(tok);
    }

    /** Words and characters that make many merges, ties and byte fallbacks. */
    private static final String[] PARTS = {"Once", " upon", " a", " time", "the", "e", "t", "h", " ", "  ", "ing", "ed",
        ",", ".", "\n", "Lily", "é", "€", "😀", "日本", "aaaa", "\t", "x", "q", "zz", "!", "'"};

    static IntStream seeds() {
        return IntStream.rangeClosed(1, 60);
    }

    private static String randomText(long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        StringBuilder b = new StringBuilder();
        int parts = r.nextInt(0, 120);
        for (int i = 0; i < parts; i++) {
            b.append(r.nextInt(5) == 0 ? String.valueOf((char) r.nextInt(32, 0x2FF)) : PARTS[r.nextInt(PARTS.length)]);
        }
        return b.toString();
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void priorityQueueMergeEqualsRunCsQuadraticMerge(long seed) {
        String text = randomText(seed);
        assertThat(tok.encode(text, true)).as("seed %d, text '%s'", seed, text).containsExactly(reference.encode(text, true));
        assertThat(tok.encode(text, false)).as("seed %d", seed).containsExactly(reference.encode(text, false));
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void minTokensIsALowerBound(long seed) {
        String text = randomText(seed);
        int bytes = text.getBytes(StandardCharsets.UTF_8).length;
        assertThat((long) tok.encode(text, true).length).as("seed %d", seed).isGreaterThanOrEqualTo(tok.minTokens(bytes, true));
        assertThat((long) tok.encode(text, false).length).as("seed %d", seed).isGreaterThanOrEqualTo(tok.minTokens(bytes, false));
    }

    @Test
    void minTokensOfEmptyTextIsBosAlone() {
        assertThat(tok.minTokens(0, true)).isEqualTo(1);
        assertThat(tok.minTokens(0, false)).isZero();
    }

    /** A megabyte of text: the quadratic merge needed hours for this (4 minutes for 100 KB); the guard is 100x the expected time. */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aMegabyteEncodesAndDecodesBack() {
        String story = "Once upon a time, there was a little girl named Lily. She loved to play outside in the park. ";
        String text = story.repeat(1_000_000 / story.length());
        int[] ids = tok.encode(text, true);
        assertThat(tok.decode(ids)).isEqualTo(text);
        assertThat((long) ids.length).isGreaterThanOrEqualTo(tok.minTokens(text.getBytes(StandardCharsets.UTF_8).length, true));
    }

    @Test
    void nulIsRefusedNotSilentlyTheEnd() {
        assertThatThrownBy(() -> tok.encode("Once\0upon", true))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("NUL character at character 4");
    }
}

package io.kvtier.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TokenizerTest {

    private static Tokenizer tok;

    @BeforeAll
    static void load() {
        tok = Tokenizer.load(SharedFiles.tok512(), 512);
    }

    @Test
    void encodesEveryReferencePromptAsRunC() {
        for (SharedFiles.Reference r : SharedFiles.greedyReferences()) {
            assertThat(tok.encode(r.prompt(), true)).as("prompt '%s'", r.prompt()).containsExactly(r.promptIds());
        }
    }

    @Test
    void decodesEveryReferenceRecordToItsText() {
        for (SharedFiles.Reference r : SharedFiles.greedyReferences()) {
            int[] all = IntStream.concat(Arrays.stream(r.promptIds()), Arrays.stream(r.generatedIds())).toArray();
            assertThat(tok.decode(all)).as("prompt '%s'", r.prompt()).isEqualTo(r.text());
        }
    }

    @Test
    void emptyTextHasNoDummyPrefix() {
        assertThat(tok.encode("", true)).containsExactly(1);
        assertThat(tok.encode("", false)).isEmpty();
    }

    @Test
    void charactersOutsideTheVocabularyFallBackToBytePiecesThatDecodeBack() {
        // tok512 has pieces for "é" and "€" but not for the emoji: its 4 UTF-8 bytes become <0xNN> = NN + 3.
        int[] ids = tok.encode("é€😀", false);
        int space = tok.encode(" ", false)[0];
        assertThat(ids).containsExactly(space, id("é"), id("€"), 0xF0 + 3, 0x9F + 3, 0x98 + 3, 0x80 + 3);
        assertThat(tok.decode(ids)).isEqualTo(" é€😀");
        assertThat(tok.pieceBytes(0, 0xF0 + 3)).containsExactly((byte) 0xF0);
    }

    private static int id(String piece) {
        byte[] want = piece.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        for (int i = 0; i < tok.vocabSize(); i++) {
            if (Arrays.equals(tok.piece(i), want)) return i;
        }
        throw new AssertionError("no piece " + piece);
    }

    @Test
    void pieceAfterBosDropsItsLeadingSpace() {
        int once = tok.encode("Once", false)[0];
        assertThat(new String(tok.piece(once))).isEqualTo(" Once");
        assertThat(tok.decodePiece(Tokenizer.BOS, once)).isEqualTo("Once");
        assertThat(tok.decodePiece(5, once)).isEqualTo(" Once");
    }

    @Test
    void tokenizerWithTooFewPiecesIsRejected(@TempDir Path tmp) throws IOException {
        Path file = Files.write(tmp.resolve("tok.bin"), Arrays.copyOf(Files.readAllBytes(SharedFiles.tok512()), 200));
        assertThatThrownBy(() -> Tokenizer.load(file, 512))
                .isInstanceOf(ModelFormatException.class)
                .hasMessageContaining("tok.bin").hasMessageContaining("ends after");
    }

    @Test
    void tokenizerLargerThanTheVocabularyIsRejected() {
        assertThatThrownBy(() -> Tokenizer.load(SharedFiles.tok512(), 500))
                .isInstanceOf(ModelFormatException.class)
                .hasMessageContaining("tok512.bin").hasMessageContaining("bytes left after 500 pieces");
    }

    @Test
    void missingTokenizerIsReported(@TempDir Path tmp) {
        assertThatThrownBy(() -> Tokenizer.load(tmp.resolve("none.bin"), 512))
                .isInstanceOf(ModelFormatException.class)
                .hasMessageContaining("none.bin").hasMessageContaining("not found");
    }
}

package io.kvtier.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Incremental text: whole UTF-8 characters only, and stop strings cut (never leaked) across token boundaries. */
class TextStreamerTest {

    /** A model whose token i prints PIECES[i] (BOS = 1 prints nothing); ids 10+ are single raw bytes. */
    static final class FakeModelText implements ModelText {
        static final String[] PIECES = {"", "", "Hel", "lo", " wor", "ld", "!", " E", "ND", "x"};

        @Override
        public String modelName() {
            return "fake";
        }

        @Override
        public int[] encode(String text, boolean addSpecial) {
            return new int[] {1};
        }

        @Override
        public byte[] pieceBytes(int prevToken, int token) {
            return token >= 10 ? new byte[] {(byte) (token - 10)} : PIECES[token].getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public String detokenize(int[] ids) {
            return "";
        }

        @Override
        public int vocabSize() {
            return 266;
        }

        @Override
        public int maxBytesPerToken() {
            return 4;
        }

        @Override
        public String renderChat(List<io.kvtier.model.chat.ChatMessage> messages, boolean addGenerationPrompt) {
            throw new UnsupportedOperationException("not used by TextStreamer");
        }

        @Override
        public int[] encodeChat(String rendered, boolean addSpecial) {
            throw new UnsupportedOperationException("not used by TextStreamer");
        }
    }

    private static final ModelText MODEL = new FakeModelText();

    @Test
    void aCharacterSplitOverByteTokensIsSentWhole() {
        TextStreamer t = new TextStreamer(MODEL, List.of(), 1);
        byte[] euro = "€".getBytes(StandardCharsets.UTF_8); // 3 bytes
        assertThat(t.accept(new int[] {2, 10 + (euro[0] & 0xFF)})).isEqualTo("Hel");
        assertThat(t.accept(new int[] {10 + (euro[1] & 0xFF)})).isEmpty();
        assertThat(t.accept(new int[] {10 + (euro[2] & 0xFF), 3})).isEqualTo("€lo");
        assertThat(t.finish()).isEmpty();
        assertThat(t.text()).isEqualTo("Hel€lo");
    }

    @Test
    void aStopStringAcrossTokensIsCutAndNeverSent() {
        TextStreamer t = new TextStreamer(MODEL, List.of("lo wo"), 1);
        StringBuilder sent = new StringBuilder();
        for (int id : new int[] {2, 3, 4, 5}) {
            sent.append(t.accept(new int[] {id}));
            assertThat(sent.toString()).doesNotContain("lo").doesNotContain("lo w");
        }
        assertThat(t.stopped()).isTrue();
        assertThat(sent.toString()).isEqualTo("Hel");
        assertThat(t.tokensUsed()).isEqualTo(3); // "Hel", "lo", " wor": the third completed the stop string
        assertThat(t.accept(new int[] {6})).isEmpty();
        assertThat(t.finish()).isEmpty();
    }

    @Test
    void heldTextThatTurnsOutNotToBeAStopIsSentLaterOrAtTheEnd() {
        TextStreamer t = new TextStreamer(MODEL, List.of("ld?", " END!"), 1);
        assertThat(t.accept(new int[] {2, 3, 4})).isEqualTo("Hello wor");
        assertThat(t.accept(new int[] {5})).isEmpty(); // "ld" may begin "ld?"
        assertThat(t.accept(new int[] {6})).isEqualTo("ld!");
        assertThat(t.accept(new int[] {7})).isEmpty(); // " E" may begin " END!"
        assertThat(t.accept(new int[] {8})).isEmpty(); // " END" still may
        assertThat(t.finish()).isEqualTo(" END");
        assertThat(t.stopped()).isFalse();
        assertThat(t.text()).isEqualTo("Hello world! END");
    }

    @Test
    void theEarliestOfSeveralStopStringsWins() {
        TextStreamer t = new TextStreamer(MODEL, List.of("world", "lo"), 1);
        assertThat(t.accept(new int[] {2, 3, 4, 5})).isEqualTo("Hel");
        assertThat(t.stopped()).isTrue();
    }
}

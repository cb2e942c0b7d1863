package io.kvtier.model.tokenizer;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.engine.ReferenceRecords;
import io.kvtier.model.TextTokenizer;
import io.kvtier.model.Tokenizer;
import io.kvtier.model.gguf.GgufFile;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * stories260K as a llama2.c checkpoint and as GGUF prints the same text: streamed piece by piece
 * (each piece given its predecessor, BOS printing nothing, as the CLI streams) over prompt and
 * generated ids of every reference record. The GGUF pieces once kept SentencePiece's prefix space
 * after BOS.
 */
class PieceTextParityTest {

    @Test
    void ggufAndLlama2cPrintTheSameTextForEveryReferenceRecord() {
        Tokenizer llama2c = Tokenizer.load(ReferenceRecords.tokenizer(), 512);
        try (GgufFile f = GgufFile.open(ReferenceRecords.shared().resolve("models/gguf/stories260K.gguf"))) {
            GgufTokenizer gguf = GgufTokenizer.of(f);
            assertThat(ReferenceRecords.load()).hasSize(8).allSatisfy(r -> {
                int[] ids = IntStream.concat(IntStream.of(r.promptIds()), IntStream.of(r.expectedOutput())).toArray();
                String text = streamed(gguf, ids);
                assertThat(text).as("prompt '%s'", r.prompt()).isEqualTo(streamed(llama2c, ids))
                        .isEqualTo(llama2c.decode(ids)).doesNotStartWith(" ");
            });
            // The first story token after BOS: "Once" without its SentencePiece space.
            int once = gguf.vocabulary().id("\u2581Once");
            assertThat(new String(gguf.pieceBytes(1, once), StandardCharsets.UTF_8)).isEqualTo("Once");
            assertThat(new String(gguf.pieceBytes(-1, once), StandardCharsets.UTF_8)).isEqualTo(" Once");
        }
    }

    private static String streamed(TextTokenizer t, int[] ids) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int prev = -1;
        for (int id : ids) {
            if (id != t.bosId()) {
                out.writeBytes(t.pieceBytes(prev, id));
            }
            prev = id;
        }
        return out.toString(StandardCharsets.UTF_8);
    }
}

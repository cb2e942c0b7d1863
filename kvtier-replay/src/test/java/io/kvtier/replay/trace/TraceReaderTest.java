package io.kvtier.replay.trace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class TraceReaderTest {

    private static Trace parse(String text) throws IOException {
        return TraceReader.read(new StringReader(text), "t.jsonl");
    }

    @Test
    void readsRequestsWithPartialAndExactLastBlocks() throws IOException {
        Trace t = parse("""
                {"timestamp": 0, "input_length": 1300, "output_length": 7, "hash_ids": [4, 5, 6]}

                {"hash_ids": [4], "output_length": 0, "input_length": 512, "timestamp": 1500, "extra": {"a": [1]}}
                """);
        assertThat(t.source()).isEqualTo("t.jsonl");
        assertThat(t.size()).isEqualTo(2);
        TraceRequest a = t.requests().get(0);
        assertThat(a).isEqualTo(new TraceRequest(0, 1300, 7, new int[] {4, 5, 6}));
        assertThat(a.blocks()).isEqualTo(3);
        assertThat(a.fullBlocks()).isEqualTo(2);
        assertThat(a.blockLength(2)).isEqualTo(1300 - 1024);
        TraceRequest b = t.requests().get(1);
        assertThat(b.timestampMs()).isEqualTo(1500);
        assertThat(b.fullBlocks()).isEqualTo(1);
        assertThat(b.blockLength(0)).isEqualTo(512);
        assertThat(t.promptTokens()).isEqualTo(1812);
        assertThat(t.outputTokens()).isEqualTo(7);
    }

    @Test
    void leadingByteOrderMarkIsDropped(@org.junit.jupiter.api.io.TempDir Path dir) throws IOException {
        // As an editor saves it: EF BB BF, then the first line.
        Path file = dir.resolve("bom.jsonl");
        byte[] line = "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 2, \"hash_ids\": [1]}\n"
                .getBytes(java.nio.charset.StandardCharsets.UTF_8);
        java.nio.file.Files.write(file, concat(new byte[] {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF}, line));
        Trace t = TraceReader.read(file);
        assertThat(t.requests()).containsExactly(new TraceRequest(0, 10, 2, new int[] {1}));
        // Only at the start of the file: on a later line it is a stray character, refused as before.
        assertThatThrownBy(() -> parse(new String(line, java.nio.charset.StandardCharsets.UTF_8) + "\uFEFF"
                + new String(line, java.nio.charset.StandardCharsets.UTF_8)))
                .hasMessageStartingWith("t.jsonl:2: field '(json)': malformed JSON");
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] c = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }

    @Test
    void fromRequestIsAWindowNamedByItsStart() throws IOException {
        Trace t = parse("""
                {"timestamp": 0, "input_length": 600, "output_length": 1, "hash_ids": [1, 2]}
                {"timestamp": 5, "input_length": 600, "output_length": 1, "hash_ids": [1, 3]}
                {"timestamp": 9, "input_length": 512, "output_length": 1, "hash_ids": [4]}
                """);
        assertThat(t.fromRequest(0)).isSameAs(t);
        Trace w = t.fromRequest(1);
        assertThat(w.source()).isEqualTo("t.jsonl from request 1");
        assertThat(w.requests()).containsExactly(t.requests().get(1), t.requests().get(2));
        assertThat(w.partial()).isFalse();
        Trace first = w.firstRequests(1);
        assertThat(first.requests()).containsExactly(t.requests().get(1));
        assertThat(first.partial()).isTrue();
        assertThat(first.fileRequests()).isEqualTo(2);
        assertThatThrownBy(() -> t.fromRequest(3)).hasMessageContaining("outside the trace's 3 requests");
        assertThatThrownBy(() -> t.fromRequest(-1)).hasMessageContaining("outside");
    }

    @Test
    void requestIsAValueThatCopiesItsIds() {
        int[] ids = {1, 2};
        TraceRequest r = new TraceRequest(0, 600, 1, ids);
        ids[0] = 99;
        assertThat(r.hashId(0)).isEqualTo(1);
        r.hashIds()[1] = 99;
        assertThat(r.hashId(1)).isEqualTo(2);
        assertThatThrownBy(() -> new TraceRequest(0, 600, 1, new int[] {1}))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("needs 2 hash ids");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            missing timestamp      | {"input_length": 10, "output_length": 1, "hash_ids": [1]}                      | timestamp     | missing
            missing hash_ids       | {"timestamp": 0, "input_length": 10, "output_length": 1}                      | hash_ids      | missing
            string length          | {"timestamp": 0, "input_length": "10", "output_length": 1, "hash_ids": [1]}   | input_length  | expected an integer, got string "10"
            float timestamp        | {"timestamp": 0.5, "input_length": 10, "output_length": 1, "hash_ids": [1]}   | timestamp     | non-integer number 0.5
            negative output        | {"timestamp": 0, "input_length": 10, "output_length": -1, "hash_ids": [1]}    | output_length | must be >= 0, got -1
            zero input             | {"timestamp": 0, "input_length": 0, "output_length": 1, "hash_ids": []}       | input_length  | must be >= 1, got 0
            too few ids            | {"timestamp": 0, "input_length": 513, "output_length": 1, "hash_ids": [1]}    | hash_ids      | needs ceil(513/512) = 2 ids, got 1
            too many ids           | {"timestamp": 0, "input_length": 512, "output_length": 1, "hash_ids": [1, 2]} | hash_ids      | needs ceil(512/512) = 1 ids, got 2
            id not a number        | {"timestamp": 0, "input_length": 10, "output_length": 1, "hash_ids": ["x"]}   | hash_ids      | element 0: expected an integer, got string "x"
            negative id            | {"timestamp": 0, "input_length": 600, "output_length": 1, "hash_ids": [1, -3]} | hash_ids     | element 1: must be >= 0, got -3
            id out of int range    | {"timestamp": 0, "input_length": 10, "output_length": 1, "hash_ids": [9999999999]} | hash_ids | number out of range
            ids not an array       | {"timestamp": 0, "input_length": 10, "output_length": 1, "hash_ids": 1}       | hash_ids      | expected an array
            duplicate field        | {"timestamp": 0, "timestamp": 1, "input_length": 10, "output_length": 1, "hash_ids": [1]} | timestamp | given more than once
            huge length            | {"timestamp": 0, "input_length": 99999999999, "output_length": 1, "hash_ids": [1]} | input_length | exceeds
            not an object          | [1, 2]                                                                        | (line)        | expected a JSON object
            trailing content       | {"timestamp": 0, "input_length": 10, "output_length": 1, "hash_ids": [1]} {} | (line)        | content after the JSON object
            broken json            | {"timestamp": 0, "input_length": 10,                                          | (json)        | malformed JSON
            """)
    void badLineNamesFileLineAndField(String name, String line, String field, String detail) {
        String text = "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [1]}\n\n" + line + "\n";
        assertThatThrownBy(() -> parse(text))
                .isInstanceOfSatisfying(TraceFormatException.class, e -> {
                    assertThat(e.source()).isEqualTo("t.jsonl");
                    assertThat(e.line()).isEqualTo(3);
                    assertThat(e.field()).isEqualTo(field);
                })
                .hasMessageStartingWith("t.jsonl:3: field '" + field + "': ")
                .hasMessageContaining(detail)
                .message().satisfies(m -> assertThat(m.indexOf("t.jsonl:")).isEqualTo(m.lastIndexOf("t.jsonl:")));
    }

    @Test
    void readsTheShippedTracesWhole() throws IOException {
        Path dir = MooncakeTraces.directory();
        long t0 = System.nanoTime();
        Trace conv = TraceReader.read(dir.resolve(MooncakeTraces.CONVERSATION));
        long millis = (System.nanoTime() - t0) / 1_000_000;
        Trace syn = TraceReader.read(dir.resolve(MooncakeTraces.SYNTHETIC));
        System.out.printf("read conversation trace in %d ms%n", millis);

        assertThat(conv.size()).isEqualTo(12_031);
        assertThat(conv.promptTokens()).isEqualTo(144_793_823L);
        assertThat(conv.requests().stream().mapToInt(TraceRequest::blocks).sum()).isEqualTo(288_500);
        assertThat(syn.size()).isEqualTo(3_993);
        assertThat(syn.promptTokens()).isEqualTo(61_194_628L);
        assertThat(syn.requests().stream().mapToInt(TraceRequest::blocks).sum()).isEqualTo(121_877);
        for (Trace t : new Trace[] {conv, syn}) {
            // Arrival order: timed replay may rely on it.
            for (int i = 1; i < t.size(); i++) {
                assertThat(t.requests().get(i).timestampMs()).isGreaterThanOrEqualTo(t.requests().get(i - 1).timestampMs());
            }
        }
        assertThat(conv.requests().getFirst()).isEqualTo(new TraceRequest(0, 6758, 500,
                new int[] {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}));
    }
}

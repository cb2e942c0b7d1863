package io.kvtier.model.tokenizer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * llama.cpp's tokenizer test vectors ({@code X.gguf.inp} / {@code X.gguf.out}), read as its
 * {@code tests/test-tokenizer-0.cpp} reads them: inputs separated by
 * {@code "\n__ggml_vocab_test__\n"}, one line of space-separated ids per input (trimmed; an
 * empty line is no tokens). Each is tokenized with add_special = parse_special = false.
 */
record TokenizerVectors(String name, List<String> inputs, List<int[]> outputs) {

    private static final String SEP = "\n__ggml_vocab_test__\n";

    static TokenizerVectors read(Path vocabDir, String name) {
        try {
            String raw = Files.readString(vocabDir.resolve("ggml-vocab-" + name + ".gguf.inp"), StandardCharsets.UTF_8);
            List<String> inputs = new ArrayList<>();
            int pos = 0;
            while (pos < raw.length()) {
                int next = raw.indexOf(SEP, pos);
                if (next < 0) {
                    inputs.add(raw.substring(pos));
                    break;
                }
                inputs.add(raw.substring(pos, next));
                pos = next + SEP.length();
            }
            List<int[]> outputs = new ArrayList<>();
            for (String line : Files.readAllLines(vocabDir.resolve("ggml-vocab-" + name + ".gguf.out"))) {
                String t = line.strip();
                outputs.add(t.isEmpty() ? new int[0] : Arrays.stream(t.split(" ")).mapToInt(Integer::parseInt).toArray());
            }
            if (inputs.size() != outputs.size()) {
                throw new IllegalStateException(name + ": " + inputs.size() + " inputs but " + outputs.size() + " outputs");
            }
            return new TokenizerVectors(name, inputs, outputs);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Every case's mismatch, one line each ("" when all pass). */
    String failures(GgufTokenizer tok) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < inputs.size(); i++) {
            int[] got = tok.encode(inputs.get(i), false, false);
            if (!Arrays.equals(got, outputs.get(i))) {
                sb.append("\n  case ").append(i).append(" ").append(quote(inputs.get(i)))
                        .append(": expected ").append(Arrays.toString(outputs.get(i)))
                        .append(" got ").append(Arrays.toString(got));
            }
        }
        return sb.toString();
    }

    static String quote(String s) {
        String q = s.replace("\n", "\\n").replace("\t", "\\t");
        return "'" + (q.length() > 60 ? q.substring(0, 60) + "..." : q) + "'";
    }
}

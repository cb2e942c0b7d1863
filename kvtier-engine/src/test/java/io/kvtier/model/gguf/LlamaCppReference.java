package io.kvtier.model.gguf;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * One line of a {@code models/gguf-ref/*.ref.jsonl} file (llama.cpp's outputs; format in that
 * folder's README §4.3): the prompt ids, the top-8 logits and L2 norm at every prompt position,
 * and 32 greedy steps with their top-8 logits.
 */
public record LlamaCppReference(String model, int promptIndex, String promptKind, String promptText, int[] promptIds,
                         int nVocab, List<Logits> promptLogits, List<Logits> generated, int[] generatedIds) {

    /** Top-8 {@code ids}/{@code values} and the L2 norm of one logit vector. */
    public record Logits(double l2, int[] ids, float[] values) {

        /** RMS of the full logit vector: l2 / sqrt(n_vocab). */
        double rms(int nVocab) {
            return l2 / Math.sqrt(nVocab);
        }
    }

    public static Path folder() {
        return io.kvtier.engine.ReferenceRecords.shared().resolve("models/gguf-ref");
    }

    public static List<LlamaCppReference> load(Path jsonl) {
        ObjectMapper om = new ObjectMapper();
        List<LlamaCppReference> out = new ArrayList<>();
        try {
            for (String line : Files.readAllLines(jsonl)) {
                if (line.isBlank()) continue;
                JsonNode n = om.readTree(line);
                List<Logits> prompt = new ArrayList<>();
                for (JsonNode p : n.get("prompt_logits")) prompt.add(logits(p));
                List<Logits> gen = new ArrayList<>();
                for (JsonNode g : n.get("generated")) gen.add(logits(g));
                out.add(new LlamaCppReference(n.get("model").asText(), n.get("prompt_index").asInt(),
                        n.get("prompt_kind").asText(), n.get("prompt_text").asText(), ints(n.get("prompt_ids")),
                        n.get("n_vocab").asInt(), prompt, gen, ints(n.get("generated_ids"))));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    private static Logits logits(JsonNode n) {
        JsonNode top = n.get("top");
        int[] ids = new int[top.size()];
        float[] vals = new float[top.size()];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = top.get(i).get(0).asInt();
            vals[i] = (float) top.get(i).get(1).asDouble();
        }
        return new Logits(n.get("l2").asDouble(), ids, vals);
    }

    private static int[] ints(JsonNode a) {
        int[] out = new int[a.size()];
        for (int i = 0; i < out.length; i++) out[i] = a.get(i).asInt();
        return out;
    }
}

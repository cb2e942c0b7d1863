package io.kvtier.model.tokenizer;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvtier.engine.ReferenceRecords;
import io.kvtier.model.gguf.GgufBytes;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Vocab-only GGUF files built from the Hugging Face / GPT-2 tokenizer data in
 * {@code shared/models/gguf/tokenizer-src/} the way llama.cpp's converter writes them: tokens
 * by id, merges in rank order, the special tokens the source lacks appended as control tokens
 * (type 3), everything else normal (type 1).
 */
final class SourceVocabularies {

    private static final ObjectMapper JSON = new ObjectMapper();

    private SourceVocabularies() {
    }

    static Path src(String name) {
        return ReferenceRecords.shared().resolve("models/gguf/tokenizer-src/" + name);
    }

    /** Llama 3: 128,000 tokens + the 256 Llama 3.1/3.2 special tokens, pre llama-bpe, BOS 128000 added, EOS 128009. */
    static Path llama3(Path dir) throws IOException {
        List<String> specials = new ArrayList<>(List.of("<|begin_of_text|>", "<|end_of_text|>",
                "<|reserved_special_token_0|>", "<|reserved_special_token_1|>", "<|finetune_right_pad_id|>",
                "<|reserved_special_token_2|>", "<|start_header_id|>", "<|end_header_id|>", "<|eom_id|>", "<|eot_id|>",
                "<|python_tag|>"));
        for (int i = 3; i <= 247; i++) specials.add("<|reserved_special_token_" + i + "|>");
        return write(dir, "llama3.gguf", src("llama3.2/encoder.json"), src("llama3.2/vocab.bpe"), specials,
                "llama-bpe", 128000, 128009, true);
    }

    /** Qwen2: 151,643 tokens + endoftext / im_start / im_end, pre qwen2, no BOS added, EOS im_end. */
    static Path qwen2(Path dir) throws IOException {
        return write(dir, "qwen2.gguf", src("qwen2/vocab.json"), src("qwen2/merges.txt"),
                List.of("<|endoftext|>", "<|im_start|>", "<|im_end|>"), "qwen2", 151643, 151645, false);
    }

    private static Path write(Path dir, String name, Path vocabJson, Path mergesFile, List<String> specials, String pre,
                              int bos, int eos, boolean addBos) throws IOException {
        Map<String, Integer> byText = JSON.readValue(vocabJson.toFile(), new TypeReference<Map<String, Integer>>() { });
        String[] tokens = new String[byText.size() + specials.size()];
        byText.forEach((text, id) -> tokens[id] = text);
        for (int i = 0; i < specials.size(); i++) tokens[byText.size() + i] = specials.get(i);
        int[] types = new int[tokens.length];
        Arrays.fill(types, 0, byText.size(), 1);
        Arrays.fill(types, byText.size(), tokens.length, 3);
        String[] merges = Files.readAllLines(mergesFile, StandardCharsets.UTF_8).stream()
                .filter(l -> !l.isEmpty() && !l.startsWith("#version")).toArray(String[]::new);
        return new GgufBytes()
                .string("general.architecture", "llama")
                .string("tokenizer.ggml.model", "gpt2")
                .string("tokenizer.ggml.pre", pre)
                .strings("tokenizer.ggml.tokens", tokens)
                .ints("tokenizer.ggml.token_type", types)
                .strings("tokenizer.ggml.merges", merges)
                .u32("tokenizer.ggml.bos_token_id", bos)
                .u32("tokenizer.ggml.eos_token_id", eos)
                .bool("tokenizer.ggml.add_bos_token", addBos)
                .write(dir, name);
    }
}

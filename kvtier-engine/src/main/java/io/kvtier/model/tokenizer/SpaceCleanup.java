package io.kvtier.model.tokenizer;

import java.util.Arrays;

/**
 * The three passes llama.cpp's {@code llama_detokenize} runs for vocabularies with
 * {@code clean_spaces} (Hugging Face's {@code clean_up_tokenization_spaces}): drop the space
 * before {@code ? ! . ,}; turn {@code " ' "} into {@code "'"}; drop the space before
 * {@code 's 'm 're 've}.
 */
final class SpaceCleanup {

    private SpaceCleanup() {
    }

    static byte[] apply(byte[] t) {
        int total = t.length;
        // Pass 1: " ?", " !", " .", " ,"
        int n1 = total;
        total = n1 > 0 ? 1 : 0;
        for (int i = 1; i < n1; i++) {
            byte x = t[i];
            if (t[i - 1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',')) {
                total--;
            }
            t[total++] = x;
        }
        // Pass 2: " ' " becomes "'"
        int n2 = total;
        total = n2 > 0 ? 1 : 0;
        for (int i = 1; i < n2; i++) {
            byte x = t[i];
            if (x == '\'' && i + 1 < n2 && t[i - 1] == ' ' && t[i + 1] == ' ') {
                total--;
                t[++i] = 0;
            }
            t[total++] = x;
        }
        // Pass 3: " 's", " 'm", " 're", " 've"
        int n3 = total;
        total = n3 > 0 ? 1 : 0;
        for (int i = 1; i < n3; i++) {
            byte x = t[i];
            if (t[i - 1] == ' ' && x == '\'' && i + 1 < n3) {
                byte x1 = t[i + 1];
                if (x1 == 's' || x1 == 'm') {
                    total--;
                } else if (i + 2 < n3) {
                    byte x2 = t[i + 2];
                    if ((x1 == 'r' && x2 == 'e') || (x1 == 'v' && x2 == 'e')) {
                        total--;
                    }
                }
            }
            t[total++] = x;
        }
        return Arrays.copyOf(t, total);
    }
}

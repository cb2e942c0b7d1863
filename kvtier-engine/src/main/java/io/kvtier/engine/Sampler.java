package io.kvtier.engine;

import java.util.Arrays;
import java.util.SplittableRandom;

/** Chooses a token id from logits [vocab]. Stateless; the random stream is the request's. */
public final class Sampler {

    private Sampler() {
    }

    /** Argmax; the lowest id wins ties (as llama2.c's argmax). */
    public static int argmax(float[] logits) {
        int best = 0;
        for (int i = 1; i < logits.length; i++) {
            if (logits[i] > logits[best]) {
                best = i;
            }
        }
        return best;
    }

    /**
     * Samples with {@code params}: greedy when temperature is 0, else from softmax(logits / T)
     * restricted to the top-p nucleus. {@code logits} is left unchanged.
     */
    public static int sample(float[] logits, SamplingParams params, SplittableRandom rng) {
        if (params.greedy()) {
            return argmax(logits);
        }
        int n = logits.length;
        double[] p = new double[n];
        double max = Double.NEGATIVE_INFINITY;
        for (float l : logits) {
            max = Math.max(max, l);
        }
        double sum = 0;
        for (int i = 0; i < n; i++) {
            p[i] = Math.exp((logits[i] - max) / params.temperature());
            sum += p[i];
        }
        double r = rng.nextDouble();
        if (params.topP() >= 1f) {
            double acc = 0;
            for (int i = 0; i < n; i++) {
                acc += p[i] / sum;
                if (r < acc) {
                    return i;
                }
            }
            return n - 1;
        }
        // Nucleus: sort by probability, keep the smallest prefix reaching topP, renormalize.
        Integer[] order = new Integer[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        Arrays.sort(order, (a, b) -> p[a] != p[b] ? Double.compare(p[b], p[a]) : Integer.compare(a, b));
        double kept = 0;
        int last = n - 1;
        for (int k = 0; k < n; k++) {
            kept += p[order[k]] / sum;
            if (kept >= params.topP()) {
                last = k;
                break;
            }
        }
        double target = r * kept;
        double acc = 0;
        for (int k = 0; k <= last; k++) {
            acc += p[order[k]] / sum;
            if (target < acc) {
                return order[k];
            }
        }
        return order[last];
    }
}

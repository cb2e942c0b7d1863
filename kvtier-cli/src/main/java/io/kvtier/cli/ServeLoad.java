package io.kvtier.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.HdrHistogram.Histogram;

/**
 * The load of {@code bench serve}: N concurrent multi-turn conversations against an
 * OpenAI-compatible server. Every conversation starts with the same system prompt; each turn
 * appends a user message of its own and sends the whole history (as token ids, so that the prefix
 * of every turn is exactly the previous turn's prompt and answer), streaming, with
 * {@code return_token_ids} and {@code include_usage}; the answer's ids join the history. Times are
 * taken at the client: TTFT from sending to the first token chunk, inter-token latency between
 * token chunks, end-to-end to the last one.
 *
 * @param conversations concurrent conversations
 * @param turns         requests per conversation, one after another
 * @param systemTokens  tokens of the shared system prompt
 * @param userTokens    tokens of each user message
 * @param maxTokens     most tokens of each answer
 * @param sampling      temperature and top-p of every request; its seed picks the user messages' words
 */
record ServeLoad(int conversations, int turns, int systemTokens, int userTokens, int maxTokens,
                 io.kvtier.engine.SamplingParams sampling) {

    private static final ObjectMapper JSON = new ObjectMapper();
    /** llama2.c's BOS id, which {@code /tokenize} puts first. */
    private static final int BOS = 1;
    private static final String SYSTEM_TEXT = "You are a storyteller. You tell short, kind stories for small children, "
            + "about a little girl named Lily, her brother Tom, their dog Max and a red ball in the big green park. ";
    private static final String[] WORDS = {"ball", "park", "tree", "sun", "dog", "cat", "bird", "cake", "boat", "rain",
            "flower", "friend", "house", "car", "book", "star", "moon", "fish", "hat", "kite"};

    ServeLoad {
        if (conversations < 1 || turns < 1 || systemTokens < 1 || userTokens < 1 || maxTokens < 1) {
            throw new IllegalArgumentException("conversations, turns, system/user tokens and max tokens must be positive");
        }
    }

    /** Prompt tokens of the last turn (the longest request), answers at full length; long: {@code --user-tokens 2G} overflowed. */
    long longestPromptTokens() {
        return systemTokens + (long) turns * userTokens + (turns - 1L) * maxTokens;
    }

    /** Distinct tokens of every conversation's history at its end (the system prompt counted once). */
    long historyTokens() {
        return systemTokens + (long) conversations * turns * ((long) userTokens + maxTokens);
    }

    /** What one run measured. Histograms are in microseconds. */
    record Result(Histogram ttft, Histogram interToken, Histogram e2e, long requests, long promptTokens,
                  long generatedTokens, long cachedTokens, double wallSeconds) {

        double generatedPerSecond() {
            return generatedTokens / wallSeconds;
        }

        double cachedShare() {
            return promptTokens == 0 ? 0 : (double) cachedTokens / promptTokens;
        }
    }

    /**
     * Runs every conversation to its end against {@code baseUrl} (e.g. {@code http://127.0.0.1:8000}).
     *
     * @throws BadInputException if the server answers a request with an error (its message is kept)
     */
    Result run(String baseUrl, String model) throws IOException, InterruptedException {
        return run(baseUrl, model, null);
    }

    /** {@link #run(String, String)} sending {@code apiKey} as {@code Authorization: Bearer} (null: none). */
    Result run(String baseUrl, String model, String apiKey) throws IOException, InterruptedException {
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(10)).build();
        Client c = new Client(http, baseUrl, model, sampling, apiKey);
        int[] system = c.tokens(SYSTEM_TEXT, systemTokens, true);
        Histogram ttft = histogram();
        Histogram itl = histogram();
        Histogram e2e = histogram();
        AtomicLong prompt = new AtomicLong();
        AtomicLong generated = new AtomicLong();
        AtomicLong cached = new AtomicLong();
        long t0 = System.nanoTime();
        List<Future<?>> futures = new ArrayList<>();
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int conv = 0; conv < conversations; conv++) {
                int id = conv;
                futures.add(pool.submit(() -> {
                    int[] history = system;
                    java.util.SplittableRandom rnd = new java.util.SplittableRandom(sampling.seed() * 1_000_003 + id);
                    for (int turn = 0; turn < turns; turn++) {
                        int[] user = c.tokens(userMessage(rnd, id, turn, userTokens), userTokens, false);
                        int[] promptIds = concat(history, user);
                        Turn t = c.stream(promptIds, maxTokens);
                        synchronized (ttft) {
                            ttft.recordValue(t.ttftMicros());
                            e2e.recordValue(t.e2eMicros());
                            for (long gap : t.gapsMicros()) {
                                itl.recordValue(gap);
                            }
                        }
                        prompt.addAndGet(promptIds.length);
                        generated.addAndGet(t.answer().length);
                        cached.addAndGet(t.cachedTokens());
                        history = concat(promptIds, t.answer());
                    }
                    return null;
                }));
            }
            for (Future<?> f : futures) {
                try {
                    f.get();
                } catch (java.util.concurrent.ExecutionException e) {
                    if (e.getCause() instanceof BadInputException b) {
                        throw b;
                    }
                    throw new IOException("a conversation failed: " + e.getCause(), e.getCause());
                }
            }
        }
        double wall = (System.nanoTime() - t0) / 1e9;
        return new Result(ttft, itl, e2e, (long) conversations * turns, prompt.get(), generated.get(), cached.get(), wall);
    }

    /**
     * A message of at least {@code words} words (so at least that many tokens). It starts with
     * the conversation's and the turn's numbers: the request cuts it to {@code --user-tokens}
     * tokens, and a shared opening phrase first made every conversation's messages the same
     * below about 19 tokens (a new user's trial: the cached share then described one conversation).
     */
    static String userMessage(java.util.SplittableRandom rnd, int conv, int turn, int words) {
        StringBuilder sb = new StringBuilder(conv + " " + turn + ": now tell me about the");
        for (int i = 0; i < words; i++) {
            sb.append(' ').append(WORDS[rnd.nextInt(WORDS.length)]);
        }
        return sb.append(".").toString();
    }

    private static Histogram histogram() {
        return new Histogram(3_600_000_000L, 3);
    }

    static int[] concat(int[] a, int[] b) {
        int[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    /** One streamed request as the client saw it. */
    record Turn(long ttftMicros, long e2eMicros, long[] gapsMicros, int[] answer, long cachedTokens) {
    }

    /** The HTTP side: {@code /tokenize} and streamed {@code /v1/completions}. */
    private record Client(HttpClient http, String base, String model, io.kvtier.engine.SamplingParams sampling, String apiKey) {

        /**
         * {@code n} token ids: those of {@code text} (without its BOS), repeated as often as needed;
         * with {@code bos}, BOS first.
         */
        int[] tokens(String text, int n, boolean bos) throws IOException, InterruptedException {
            ObjectNode body = JSON.createObjectNode().put("model", model).put("prompt", text);
            JsonNode ids = JSON.readTree(post("/tokenize", body, HttpResponse.BodyHandlers.ofString()).body()).path("tokens");
            List<Integer> text0 = new ArrayList<>();
            ids.forEach(t -> text0.add(t.asInt()));
            if (!text0.isEmpty() && text0.getFirst() == BOS) {
                text0.removeFirst();
            }
            if (text0.isEmpty()) {
                throw new BadInputException("bench serve: /tokenize gave no tokens for '" + text + "'");
            }
            int[] out = new int[n];
            int from = 0;
            if (bos) {
                out[0] = BOS;
                from = 1;
            }
            for (int i = from; i < n; i++) {
                out[i] = text0.get((i - from) % text0.size());
            }
            return out;
        }

        Turn stream(int[] prompt, int maxTokens) throws IOException, InterruptedException {
            ObjectNode body = JSON.createObjectNode().put("model", model).put("max_tokens", maxTokens)
                    .put("temperature", sampling.temperature()).put("top_p", sampling.topP()).put("seed", sampling.seed())
                    .put("stream", true).put("return_token_ids", true);
            body.putObject("stream_options").put("include_usage", true);
            ArrayNode p = body.putArray("prompt");
            for (int t : prompt) {
                p.add(t);
            }
            long sent = System.nanoTime();
            HttpResponse<Stream<String>> r = post("/v1/completions", body, HttpResponse.BodyHandlers.ofLines());
            List<Long> times = new ArrayList<>();
            List<Integer> ids = new ArrayList<>();
            long cachedTokens = 0;
            boolean done = false;
            try (Stream<String> lines = r.body()) {
                for (Iterator<String> it = lines.iterator(); it.hasNext(); ) {
                    String line = it.next();
                    if (line.startsWith("event: error")) {
                        throw new BadInputException("bench serve: the server failed a stream: " + (it.hasNext() ? it.next() : ""));
                    }
                    if (!line.startsWith("data: ")) {
                        continue;
                    }
                    long now = System.nanoTime();
                    String data = line.substring(6);
                    if (data.equals("[DONE]")) {
                        done = true;
                        break;
                    }
                    JsonNode chunk = JSON.readTree(data);
                    int before = ids.size();
                    for (JsonNode ch : chunk.path("choices")) {
                        ch.path("token_ids").forEach(t -> ids.add(t.asInt()));
                    }
                    if (ids.size() > before) {
                        times.add(now);
                    }
                    JsonNode usage = chunk.get("usage");
                    if (usage != null && !usage.isNull()) {
                        cachedTokens = usage.path("prompt_tokens_details").path("cached_tokens").asLong();
                    }
                }
            }
            if (!done || times.isEmpty()) {
                throw new IOException("a stream ended without " + (done ? "any token" : "data: [DONE]"));
            }
            long[] gaps = new long[times.size() - 1];
            for (int i = 1; i < times.size(); i++) {
                gaps[i - 1] = (times.get(i) - times.get(i - 1)) / 1000;
            }
            int[] answer = ids.stream().mapToInt(Integer::intValue).toArray();
            return new Turn((times.getFirst() - sent) / 1000, (times.getLast() - sent) / 1000, gaps, answer, cachedTokens);
        }

        private <T> HttpResponse<T> post(String path, JsonNode body, HttpResponse.BodyHandler<T> handler)
                throws IOException, InterruptedException {
            HttpRequest.Builder req = HttpRequest.newBuilder(URI.create(base + path)).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)));
            HttpResponse<T> r = http.send(ApiKeyOptions.bearer(req, apiKey), handler);
            if (r.statusCode() != 200) {
                Object b = r.body();
                String text = b instanceof Stream<?> s ? String.join("\n", s.map(String::valueOf).toList()) : String.valueOf(b);
                throw new BadInputException("bench serve: " + path + " answered " + r.statusCode() + ": " + text);
            }
            return r;
        }
    }
}

package io.kvtier.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvtier.engine.Request;
import io.kvtier.model.TextTokenizer;
import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Prints {@code generate}'s results as they finish, in completion order, flushing after each:
 * <ul>
 *   <li>jsonl: one object per finished request, its {@code index} the prompt's 0-based input
 *       position;</li>
 *   <li>text, one request at a time (a single prompt, or {@code --sequential}): the prompt's
 *       text, then each token as it is generated;</li>
 *   <li>text, several requests at once: each whole text as its request finishes.</li>
 * </ul>
 * With several prompts a text is preceded by {@code --- prompt N} (N from 1, input order) and
 * separated from the previous one by a blank line. {@link #outputClosed()} tells when standard
 * output went away (a closed pipe: {@code | head}), so the caller can stop computing.
 */
final class ResultPrinter {

    /**
     * Created on the first JSON line only: building an ObjectMapper initialises Jackson (tens of
     * milliseconds in a fresh JVM, inside the generation time a text run reports).
     */
    private static final class Json {
        static final ObjectMapper MAPPER = new ObjectMapper();
    }

    enum Format { TEXT, TEXT_STREAMED, JSONL }

    private final PrintStream out;
    private final Format format;
    private final TextTokenizer tokenizer;
    private final List<String> prompts;
    private final TextStream stream;
    /** False with --chat: the prompt is the rendered template, so only the reply is printed. */
    private final boolean echoPrompt;
    private int printed;
    /** The request whose tokens are being streamed, and how many of its output tokens are printed. */
    private Request streaming;
    private int streamedTokens;

    /**
     * @param prompts    the prompt texts in input order (a request's id is its index here)
     * @param echoPrompt whether a text starts with its prompt (false for chat: the reply alone)
     */
    ResultPrinter(PrintStream out, Format format, TextTokenizer tokenizer, List<String> prompts, boolean echoPrompt) {
        this.out = out;
        this.echoPrompt = echoPrompt;
        this.format = format;
        this.tokenizer = tokenizer;
        this.prompts = prompts;
        this.stream = new TextStream(tokenizer);
    }

    /** A request was submitted (streamed text starts with its prompt). */
    void submitted(Request r) {
        if (format != Format.TEXT_STREAMED) {
            return;
        }
        header(r);
        streaming = r;
        streamedTokens = 0;
        StringBuilder b = new StringBuilder();
        for (int id : r.promptIds()) {
            b.append(stream.append(id)); // without the echo the stream still learns each piece's predecessor
        }
        if (echoPrompt) {
            out.print(b);
        }
        out.flush();
    }

    /** A step ran: streamed text gains the tokens generated since. */
    void stepped() {
        if (streaming != null && streamNewTokens()) {
            out.flush();
        }
    }

    private boolean streamNewTokens() {
        int n = streaming.numOutputTokens();
        if (n == streamedTokens) {
            return false;
        }
        StringBuilder b = new StringBuilder();
        int[] ids = streaming.outputIds();
        for (int i = streamedTokens; i < n; i++) {
            b.append(stream.append(ids[i]));
        }
        streamedTokens = n;
        out.print(b);
        return true;
    }

    /** A request finished: its result is printed now. */
    void finished(Request r) {
        switch (format) {
            case JSONL -> out.println(json(r));
            case TEXT -> {
                header(r);
                out.println(text(r));
            }
            case TEXT_STREAMED -> {
                if (r == streaming) {
                    streamNewTokens();
                    out.println(stream.finish());
                    streaming = null;
                }
            }
        }
        printed++;
        out.flush();
    }

    /** The run stopped early: a text being streamed ends its line (its request was aborted, unfinished). */
    void stopped() {
        if (streaming != null) {
            streamNewTokens();
            out.println(stream.finish());
            streaming = null;
            out.flush();
        }
    }

    /** Whether standard output is gone (a write failed: the reader closed the pipe). */
    boolean outputClosed() {
        return out.checkError();
    }

    private void header(Request r) {
        if (prompts.size() > 1) {
            out.println(printed == 0 ? "--- prompt " + (r.id() + 1) : "\n--- prompt " + (r.id() + 1));
        }
    }

    /**
     * The text of a request exactly as streaming prints it (one {@link TextStream}: each piece given
     * its predecessor, BOS and control tokens printing nothing): prompt then generated pieces;
     * without the echo (chat) the generated pieces alone.
     */
    private String text(Request r) {
        TextStream s = new TextStream(tokenizer);
        StringBuilder b = new StringBuilder();
        for (int id : r.promptIds()) {
            String piece = s.append(id); // without the echo the stream still learns each piece's predecessor
            if (echoPrompt) {
                b.append(piece);
            }
        }
        for (int id : r.outputIds()) {
            b.append(s.append(id));
        }
        return b.append(s.finish()).toString();
    }

    private String json(Request r) {
        Map<String, Object> o = new LinkedHashMap<>();
        o.put("index", r.id());
        o.put("prompt", prompts.get((int) r.id()));
        o.put("prompt_ids", r.promptIds());
        o.put("generated_ids", r.outputIds());
        o.put("text", text(r));
        o.put("finish_reason", r.finishReason().wireName());
        o.put("device_hit_tokens", r.deviceHitTokens());
        o.put("external_hit_tokens", r.promptExternalHitTokensByTier()); // first admission's, as device_hit_tokens
        try {
            return Json.MAPPER.writeValueAsString(o);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write a result as JSON", e);
        }
    }
}

package io.kvtier.server;

import io.kvtier.model.chat.ChatMessage;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvtier.engine.SamplingParams;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Turns the JSON body of {@code /v1/completions} and {@code /v1/chat/completions} into
 * {@link CompletionParams}, or a 400 naming the parameter. Unknown fields are ignored; a known
 * field of the wrong type or out of range is an error (never silently replaced by a default).
 */
final class RequestParser {

    /** OpenAI's chat roles; any other is refused as OpenAI refuses it (400 naming {@code messages.[i].role}). */
    static final java.util.Set<String> ROLES = java.util.Set.of("system", "developer", "user", "assistant", "tool", "function");

    /** OpenAI's limit on stop sequences. */
    static final int MAX_STOP = 4;

    private final ModelText model;
    private final ContextLimit context;
    /** Positions one request can use ({@link ContextLimit#positions()}): prompts beyond it are refused. */
    private final int maxPositions;

    RequestParser(ModelText model, ContextLimit limit) {
        this.model = model;
        this.context = limit;
        this.maxPositions = limit.positions();
    }

    CompletionParams parse(JsonNode body, boolean chat) throws ApiError {
        checkModel(body);
        int n = optInt(body, "n", 1, Integer.MIN_VALUE, Integer.MAX_VALUE);
        if (n != 1) {
            throw ApiError.badRequest("n must be 1: kvtier returns one choice per request, got " + n, "n");
        }
        refuseUnsupported(body, GENERATION_FIELDS);
        int[] prompt = promptIds(body, chat, true);
        int maxTokens = maxTokens(body, prompt.length);
        float temperature = optFloat(body, "temperature", 1f, 0f, false, 2f);
        float topP = optFloat(body, "top_p", 1f, 0f, true, 1f);
        // A client's seed names its stream (the same request repeats); without one, the stream
        // also depends on the request id, so concurrent unseeded requests draw independently.
        JsonNode seedNode = body.get("seed");
        boolean ownSeed = seedNode != null && !seedNode.isNull();
        long seed = optLong(body, "seed", 0L);
        boolean stream = optBool(body, "stream", false);
        boolean includeUsage = false;
        JsonNode so = body.get("stream_options");
        if (so != null && !so.isNull()) {
            if (!so.isObject()) {
                throw ApiError.badRequest("stream_options must be an object", "stream_options");
            }
            JsonNode usage = so.get("include_usage");
            if (usage != null && !usage.isNull() && !usage.isBoolean()) {
                throw ApiError.badRequest("stream_options.include_usage must be true or false, got " + usage,
                        "stream_options.include_usage");
            }
            includeUsage = usage != null && usage.asBoolean(false);
            if (!stream && !so.isEmpty()) {
                // As OpenAI and vLLM: options of a stream on a request that is not one are a mistake.
                throw ApiError.badRequest("stream_options is only allowed with \"stream\": true", "stream_options");
            }
        }
        SamplingParams sampling = ownSeed ? SamplingParams.withOwnSeed(temperature, topP, seed)
                : new SamplingParams(temperature, topP, seed);
        return new CompletionParams(chat, prompt, maxTokens, sampling, stop(body.get("stop")),
                stream, includeUsage, optString(body, "user"), cacheSalt(body),
                optBool(body, "return_token_ids", false));
    }

    /**
     * The request's {@code max_tokens} (or {@code max_completion_tokens}): capped to the room left
     * in the model's context, as {@code generate --max-tokens} is; absent, the room left in what
     * one request can use (the context, or the device pool when smaller). A value sent that the
     * pool cannot hold with this prompt is a 400 naming the field and saying how many fit: the
     * request could never run (the prompt itself fits: {@link #promptIds} checked it).
     */
    private int maxTokens(JsonNode body, int promptLength) throws ApiError {
        int room = maxPositions - promptLength + 1; // the last token sampled needs no KV slot
        String field = body.hasNonNull("max_completion_tokens") ? "max_completion_tokens" : "max_tokens";
        int asked = optInt(body, field, room, 1, Integer.MAX_VALUE);
        int capped = Math.min(asked, context.modelContext() - promptLength + 1);
        if (capped > room) {
            throw ApiError.badRequest(field + " " + asked + " does not fit: a request can use " + maxPositions
                    + " token positions here, " + context.pool() + ", and this prompt has " + promptLength
                    + " tokens, so at most " + room + " new tokens fit; send " + field + " " + room + " or less, or leave it out", field);
        }
        return capped;
    }

    /**
     * Fields of OpenAI's and vLLM's completion and chat requests that would change what a client
     * gets back and that kvtier does not compute: asked for, they are a 400 naming the field
     * (ignoring them would hand back something other than what the client asked for). Their "off"
     * values ({@link #isOff}) are accepted.
     */
    private static final String[] GENERATION_FIELDS = {"logprobs", "top_logprobs", "echo", "best_of", "suffix", "tools",
        "functions", "tool_choice", "logit_bias", "response_format", "presence_penalty", "frequency_penalty",
        "repetition_penalty", "top_k", "min_p", "min_tokens", "ignore_eos", "stop_token_ids", "include_stop_str_in_output",
        "skip_special_tokens", "prompt_logprobs", "continue_final_message", "chat_template", "chat_template_kwargs"};

    /** The same for vLLM's {@code /tokenize}: the fields that change the ids or the response's shape. */
    private static final String[] TOKENIZE_FIELDS = {"tools", "continue_final_message", "chat_template", "chat_template_kwargs",
        "return_token_strs"};

    private static void refuseUnsupported(JsonNode body, String[] fields) throws ApiError {
        for (String field : fields) {
            JsonNode v = body.get(field);
            if (v != null && !v.isNull() && !isOff(field, v)) {
                throw ApiError.badRequest(field + " is not supported by kvtier", field);
            }
        }
    }

    /** The value that asks for nothing: completions' {@code logprobs: 0} asks for the sampled token's logprob, so it is not. */
    private static boolean isOff(String field, JsonNode v) {
        return switch (field) {
            case "logprobs", "echo" -> v.isBoolean() && !v.asBoolean();
            case "top_logprobs" -> v.isIntegralNumber() && v.asLong() == 0;
            case "best_of" -> v.isIntegralNumber() && v.asLong() == 1;
            case "suffix" -> v.isTextual() && v.asText().isEmpty();
            case "tools", "functions" -> v.isArray() && v.isEmpty();
            case "tool_choice" -> v.isTextual() && (v.asText().equals("none") || v.asText().equals("auto"));
            case "logit_bias" -> v.isObject() && v.isEmpty();
            case "response_format" -> v.isObject() && "text".equals(v.path("type").asText());
            case "presence_penalty", "frequency_penalty", "min_p", "min_tokens" -> v.isNumber() && v.asDouble() == 0;
            case "repetition_penalty" -> v.isNumber() && v.asDouble() == 1;
            case "top_k" -> v.isIntegralNumber() && (v.asLong() == -1 || v.asLong() == 0);
            case "ignore_eos", "include_stop_str_in_output", "continue_final_message", "return_token_strs" ->
                v.isBoolean() && !v.asBoolean();
            case "skip_special_tokens" -> v.isBoolean() && v.asBoolean();
            case "stop_token_ids" -> v.isArray() && v.isEmpty();
            case "chat_template_kwargs" -> v.isObject() && v.isEmpty();
            default -> false;
        };
    }

    /**
     * The token ids of a {@code /tokenize} body: {@code prompt} or {@code messages}, with
     * {@code add_special_tokens} and (messages) {@code add_generation_prompt} honoured. As in vLLM,
     * the context length is not checked: a client may ask how long an over-long prompt is.
     */
    int[] tokenize(JsonNode body) throws ApiError {
        checkModel(body);
        refuseUnsupported(body, TOKENIZE_FIELDS);
        return promptIds(body, body.has("messages"), false);
    }

    /**
     * The prompt's ids: the rendered {@code messages} (chat) or {@code prompt}, BOS added unless
     * {@code add_special_tokens} is false; never empty.
     *
     * @param limit refuse a prompt longer than the context (the completion routes; not /tokenize)
     */
    private int[] promptIds(JsonNode body, boolean chat, boolean limit) throws ApiError {
        boolean addSpecial = optBool(body, "add_special_tokens", true);
        String param = chat ? "messages" : "prompt";
        int[] ids = chat
                ? encode(renderChat(body.get("messages"), optBool(body, "add_generation_prompt", true)), param, true, addSpecial, limit)
                : prompt(body.get("prompt"), addSpecial, limit);
        if (ids.length == 0) {
            // Only text can encode to nothing (an empty id array is refused in prompt()).
            throw ApiError.badRequest("the " + param + " has no tokens: the text is empty and "
                    + (addSpecial ? "this model adds no BOS token" : "add_special_tokens is false, so no BOS is added")
                    + "; send at least one character or token id", param);
        }
        if (limit && ids.length > maxPositions) {
            throw tooLong(ids.length, param);
        }
        return ids;
    }

    /** vLLM's {@code cache_salt}: absent or a non-empty string (an empty one would silently mean no salt). */
    private static String cacheSalt(JsonNode body) throws ApiError {
        String salt = optString(body, "cache_salt");
        if (salt != null && salt.isEmpty()) {
            throw ApiError.badRequest("Parameter 'cache_salt' must be a non-empty string if provided.", "cache_salt");
        }
        String bad = salt == null ? null : badCharacter(salt);
        if (bad != null) {
            // Half a surrogate pair becomes '?' in UTF-8: "\ud800" and "?" would be one tenant.
            throw ApiError.badRequest("cache_salt has " + bad + "; two such salts could share blocks", "cache_salt");
        }
        return salt;
    }

    private void checkModel(JsonNode body) throws ApiError {
        JsonNode m = body.get("model");
        if (m != null && !m.isNull()) {
            if (!m.isTextual()) {
                throw ApiError.badRequest("model must be a string", "model");
            }
            if (!m.asText().equals(model.modelName())) {
                throw ApiError.notFound("the model '" + m.asText() + "' does not exist; this server serves '"
                        + model.modelName() + "'", "model_not_found");
            }
        }
    }

    /** @param param the field that holds the prompt ({@code prompt} or {@code messages}) */
    private ApiError tooLong(int tokens, String param) {
        return ApiError.contextLength(context.maximum() + ". However, your prompt has " + tokens
                + " tokens. Please reduce the length of the prompt.", param);
    }

    private int[] prompt(JsonNode p, boolean addSpecial, boolean limit) throws ApiError {
        if (p == null || p.isNull()) {
            throw ApiError.badRequest("prompt is required: a string or an array of token ids", "prompt");
        }
        if (p.isTextual()) {
            return encode(p.asText(), "prompt", false, addSpecial, limit);
        }
        if (!p.isArray()) {
            throw ApiError.badRequest("prompt must be a string or an array of token ids", "prompt");
        }
        if (p.isEmpty()) {
            throw ApiError.badRequest("prompt is an empty array", "prompt");
        }
        if (p.get(0).isTextual() || p.get(0).isArray()) {
            if (p.size() != 1) {
                throw ApiError.badRequest("a batch of " + p.size() + " prompts is not supported: send one prompt per request", "prompt");
            }
            return prompt(p.get(0), addSpecial, limit);
        }
        if (limit && p.size() > maxPositions) {
            throw tooLong(p.size(), "prompt");
        }
        return tokenIds(p, "prompt");
    }

    /**
     * An array of token ids, each in 0 .. vocabSize-1.
     *
     * @throws ApiError 400 naming the first bad element
     */
    int[] tokenIds(JsonNode array, String param) throws ApiError {
        int[] ids = new int[array.size()];
        for (int i = 0; i < ids.length; i++) {
            JsonNode t = array.get(i);
            if (!t.isIntegralNumber() || !t.canConvertToInt() || t.asInt() < 0 || t.asInt() >= model.vocabSize()) {
                throw ApiError.badRequest(param + "[" + i + "] must be a token id in 0.." + (model.vocabSize() - 1)
                        + ", got " + t, param);
            }
            ids[i] = t.asInt();
        }
        return ids;
    }

    /** " has " after a singular parameter name ({@code prompt}), " have " after a plural one ({@code messages}). */
    private static String has(String param) {
        return param.endsWith("s") ? " have " : " has ";
    }

    /**
     * Encodes a plain text, or a rendered chat when {@code chat}. With {@code limit}, text that must
     * exceed the context is refused before the encoder sees it, and ids that do are refused.
     */
    private int[] encode(String text, String param, boolean chat, boolean addSpecial, boolean limit) throws ApiError {
        long bytes = text.getBytes(StandardCharsets.UTF_8).length;
        if (limit && bytes > (long) maxPositions * model.maxBytesPerToken()) {
            throw ApiError.contextLength(context.maximum() + ". However, your "
                    + param + has(param) + bytes + " bytes, more than that many tokens can hold. Please reduce the length.", param);
        }
        String bad = badCharacter(text);
        if (bad != null) {
            throw ApiError.badRequest("your " + param + has(param) + bad + (chat ? " of the rendered chat" : "") + "; remove it", param);
        }
        int[] ids = chat ? model.encodeChat(text, addSpecial) : model.encode(text, addSpecial);
        if (limit && ids.length > maxPositions) {
            throw tooLong(ids.length, param);
        }
        return ids;
    }

    /**
     * Where {@code text} holds a character no tokenizer takes, or null: a NUL (the tokenizers treat
     * it as the end of a C string, as run.c does) or half a surrogate pair (JSON's {@code "\\ud800"}
     * escape decodes to no Unicode character; the CLI refuses the same as invalid UTF-8).
     */
    static String badCharacter(String text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == 0) {
                return "a NUL character (\\u0000) at character " + i;
            }
            if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return String.format(java.util.Locale.ROOT, "half a surrogate pair (\\u%04x) at character %d, not valid Unicode", (int) c, i);
            }
        }
        return null;
    }

    private String renderChat(JsonNode messages, boolean addGenerationPrompt) throws ApiError {
        if (messages == null || !messages.isArray() || messages.isEmpty()) {
            throw ApiError.badRequest("messages must be a non-empty array of {role, content}", "messages");
        }
        List<ChatMessage> list = new ArrayList<>();
        for (int i = 0; i < messages.size(); i++) {
            JsonNode m = messages.get(i);
            String where = "messages[" + i + "]";
            if (!m.isObject() || !m.path("role").isTextual()) {
                throw ApiError.badRequest(where + " must be an object with a string role",
                        m.isObject() ? "messages.[" + i + "].role" : "messages.[" + i + "]");
            }
            String role = m.get("role").asText();
            if (!ROLES.contains(role)) {
                throw ApiError.badRequest("Invalid value: '" + role + "'. Supported values are: 'system', 'assistant', 'user', "
                        + "'function', 'tool', and 'developer'.", "messages.[" + i + "].role");
            }
            String text = content(m, role, where, "messages.[" + i + "].content");
            String bad = badCharacter(text);
            if (bad != null) {
                throw ApiError.badRequest(where + ".content has " + bad + "; remove it", "messages.[" + i + "].content");
            }
            list.add(new ChatMessage(role, text, templateFields(m, i)));
        }
        try {
            return model.renderChat(list, addGenerationPrompt);
        } catch (IllegalArgumentException e) {
            throw ApiError.badRequest("the chat template cannot render these messages: " + e.getMessage(), "messages");
        }
    }

    /**
     * {@code tool_calls} with each {@code function.arguments} that is a string holding a JSON
     * object replaced by that object, as vLLM and llama.cpp hand them to templates: OpenAI clients
     * send the arguments as a JSON string, and templates that render them with {@code tojson}
     * (Llama 3, some Qwen 2) would otherwise print an escaped string. Other strings stay as they are.
     */
    static JsonNode argumentsAsObjects(JsonNode calls) {
        JsonNode copy = calls.deepCopy();
        for (JsonNode c : copy) {
            JsonNode f = c.get("function");
            if (f instanceof com.fasterxml.jackson.databind.node.ObjectNode fn && fn.path("arguments").isTextual()) {
                try {
                    JsonNode parsed = Json.MAPPER.readTree(fn.get("arguments").asText());
                    if (parsed != null && parsed.isObject()) {
                        fn.set("arguments", parsed);
                    }
                } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                    // not JSON: the template gets the string as the client sent it
                }
            }
        }
        return copy;
    }

    /**
     * The fields of message {@code i} beside {@code role} and {@code content} that chat templates
     * read (Qwen's and Llama 3's render an assistant's {@code tool_calls}; tool replies carry
     * {@code tool_call_id} and {@code name}), as plain maps and lists; without them a tool call in
     * the history would render as an empty assistant turn.
     *
     * @throws ApiError when {@code tool_calls} is not an array of objects
     */
    private static Map<String, Object> templateFields(JsonNode m, int i) throws ApiError {
        Map<String, Object> fields = new LinkedHashMap<>();
        JsonNode calls = m.get("tool_calls");
        if (calls != null && !calls.isNull()) {
            boolean objects = calls.isArray();
            for (JsonNode c : calls) {
                objects &= c.isObject();
            }
            if (!objects) {
                throw ApiError.badRequest("messages[" + i + "].tool_calls must be an array of objects", "messages.[" + i + "].tool_calls");
            }
            fields.put("tool_calls", Json.MAPPER.convertValue(argumentsAsObjects(calls), List.class));
        }
        for (String f : new String[] {"tool_call_id", "name"}) {
            JsonNode v = m.get(f);
            if (v != null && !v.isNull()) {
                if (!v.isTextual()) {
                    throw ApiError.badRequest("messages[" + i + "]." + f + " must be a string", "messages.[" + i + "]." + f);
                }
                fields.put(f, v.asText());
            }
        }
        return fields;
    }

    /**
     * A message's text: a string or an array of {@code {"type": "text", "text"}} parts (joined by a
     * newline). As OpenAI's
     * API documents it, {@code content} is required for every role but two: an assistant message
     * may leave it out (or null) when it has {@code tool_calls} or {@code function_call}, and a
     * function message may make it null; those are rendered as empty text.
     *
     * @param param the error's {@code param}: {@code messages.[i].content}
     */
    private static String content(JsonNode m, String role, String where, String param) throws ApiError {
        JsonNode c = m.get("content");
        if (c == null || c.isNull()) {
            boolean mayLack = "assistant".equals(role) ? m.hasNonNull("tool_calls") || m.hasNonNull("function_call")
                    : "function".equals(role) && c != null;
            if (mayLack) {
                return "";
            }
            throw ApiError.badRequest(c == null ? "Missing required parameter: '" + where + ".content'."
                    : "Invalid value for '" + where + ".content': expected a string, got null.", param);
        }
        if (c.isTextual()) {
            return c.asText();
        }
        if (!c.isArray()) {
            throw ApiError.badRequest(where + ".content must be a string or an array of text parts", param);
        }
        // The parts' texts joined by "\n", as vLLM joins them (glued, ["Hello", "World"] read "HelloWorld").
        List<String> texts = new ArrayList<>();
        for (JsonNode part : c) {
            if (!part.isObject() || !"text".equals(part.path("type").asText()) || !part.path("text").isTextual()) {
                throw ApiError.badRequest(where + ".content: only {\"type\": \"text\", \"text\": ...} parts are supported", param);
            }
            texts.add(part.get("text").asText());
        }
        return String.join("\n", texts);
    }

    private static List<String> stop(JsonNode s) throws ApiError {
        if (s == null || s.isNull()) {
            return List.of();
        }
        List<String> out = new ArrayList<>();
        if (s.isTextual()) {
            out.add(s.asText());
        } else if (s.isArray()) {
            for (JsonNode e : s) {
                if (!e.isTextual()) {
                    throw ApiError.badRequest("stop must be a string or an array of strings", "stop");
                }
                out.add(e.asText());
            }
        } else {
            throw ApiError.badRequest("stop must be a string or an array of strings", "stop");
        }
        if (out.size() > MAX_STOP) {
            throw ApiError.badRequest("at most " + MAX_STOP + " stop sequences, got " + out.size(), "stop");
        }
        if (out.stream().anyMatch(String::isEmpty)) {
            throw ApiError.badRequest("a stop sequence must not be empty", "stop");
        }
        for (int i = 0; i < out.size(); i++) {
            // As the prompt's text: half a surrogate pair would match half of a generated pair's UTF-16.
            String bad = badCharacter(out.get(i));
            if (bad != null) {
                throw ApiError.badRequest((s.isArray() ? "stop[" + i + "]" : "stop") + " has " + bad + "; remove it", "stop");
            }
        }
        return List.copyOf(out);
    }

    private static int optInt(JsonNode body, String field, int dflt, int min, int max) throws ApiError {
        JsonNode v = body.get(field);
        if (v == null || v.isNull()) {
            return dflt;
        }
        if (!v.isIntegralNumber() || !v.canConvertToInt()) {
            String range = min == Integer.MIN_VALUE && max == Integer.MAX_VALUE ? "" : " in " + min + ".." + max;
            throw ApiError.badRequest(field + " must be an integer" + range + ", got " + v, field);
        }
        if (v.asInt() < min || v.asInt() > max) {
            throw ApiError.badRequest(field + " must be in " + min + ".." + max + ", got " + v.asInt(), field);
        }
        return v.asInt();
    }

    private static long optLong(JsonNode body, String field, long dflt) throws ApiError {
        JsonNode v = body.get(field);
        if (v == null || v.isNull()) {
            return dflt;
        }
        if (!v.isIntegralNumber() || !v.canConvertToLong()) {
            throw ApiError.badRequest(field + " must be a 64-bit integer, got " + v, field);
        }
        return v.asLong();
    }

    /**
     * A number field as the float the sampler takes, in [min, max] or (min, max] with
     * {@code minExclusive}: the range holds for the float, so a value that rounds out of it (a
     * top_p of 1e-46 is 0 as a float) is refused naming what the client sent.
     */
    private static float optFloat(JsonNode body, String field, float dflt, float min, boolean minExclusive, float max)
            throws ApiError {
        JsonNode v = body.get(field);
        if (v == null || v.isNull()) {
            return dflt;
        }
        double d = v.asDouble();
        float f = (float) d;
        if (!v.isNumber() || !(inRange(d, min, minExclusive, max) && inRange(f, min, minExclusive, max))) {
            throw ApiError.badRequest(field + " must be a number in " + (minExclusive ? "(" : "[") + min + ", " + max
                    + "], got " + v, field);
        }
        return f;
    }

    private static boolean inRange(double v, float min, boolean minExclusive, float max) {
        return (minExclusive ? v > min : v >= min) && v <= max;
    }

    private static boolean optBool(JsonNode body, String field, boolean dflt) throws ApiError {
        JsonNode v = body.get(field);
        if (v == null || v.isNull()) {
            return dflt;
        }
        if (!v.isBoolean()) {
            throw ApiError.badRequest(field + " must be true or false, got " + v, field);
        }
        return v.asBoolean();
    }

    private static String optString(JsonNode body, String field) throws ApiError {
        JsonNode v = body.get(field);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isTextual()) {
            throw ApiError.badRequest(field + " must be a string, got " + v, field);
        }
        return v.asText();
    }
}

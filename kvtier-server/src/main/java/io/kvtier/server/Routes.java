package io.kvtier.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.concurrent.ExecutionException;

/**
 * Dispatches every exchange by method and path, checks the API key, and turns every failure into
 * an OpenAI error object. The key (when set) guards the {@code /v1/*} routes and the ones that
 * read or change the cache ({@code /tokenize}, {@code /detokenize}, {@code /reset_prefix_cache});
 * {@code /health}, {@code /version} and {@code /metrics} stay open for probes and scrapers, as in vLLM.
 */
final class Routes implements HttpHandler {

    private final ServerConfig config;
    private final EngineLoop loop;
    private final ModelText model;
    private final RequestParser parser;
    private final CompletionHandler completions;
    private final long created = System.currentTimeMillis() / 1000;
    private volatile HttpHandler metrics;
    private volatile boolean accepting = true;

    Routes(ServerConfig config, EngineLoop loop, ModelText model) {
        this.config = config;
        this.loop = loop;
        this.model = model;
        this.parser = new RequestParser(model, loop.contextLimit());
        this.completions = new CompletionHandler(config, loop, model, parser);
    }

    void setMetricsHandler(HttpHandler h) {
        metrics = h;
    }

    void stopAccepting() {
        accepting = false;
    }

    @Override
    public void handle(HttpExchange ex) {
        try (ex) {
            try {
                route(ex);
            } catch (ApiError e) {
                HttpIo.error(ex, e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (IOException e) {
                // The client went away (or sent a broken request): nothing to answer.
            } catch (RuntimeException e) {
                System.err.println("kvtier: internal error serving " + ex.getRequestMethod() + " "
                        + path(ex.getRequestURI()) + " (a bug): " + e);
                e.printStackTrace(System.err);
                HttpIo.error(ex, ApiError.internal("internal error: " + e));
            }
        } catch (IOException | RuntimeException e) {
            // Headers were already sent (a stream) or the client is gone: the exchange is closed.
        }
    }

    private void route(HttpExchange ex) throws ApiError, IOException, InterruptedException {
        String path = path(ex.getRequestURI());
        String method = ex.getRequestMethod();
        if (method.equals("OPTIONS")) {
            options(ex, path);
            return;
        }
        if (needsKey(path)) {
            checkKey(ex);
        }
        switch (path) {
            case "/v1/completions" -> completions.handle(ex, post(ex, method, path), false);
            case "/v1/chat/completions" -> completions.handle(ex, post(ex, method, path), true);
            case "/v1/models" -> {
                get(method, path);
                HttpIo.json(ex, 200, models());
            }
            case "/health" -> {
                get(method, path);
                if (!loop.alive()) {
                    throw ApiError.unavailable("the engine has stopped"
                            + (loop.deathCause() == null ? "" : ": " + loop.deathCause()));
                }
                if (!accepting) {
                    throw ApiError.unavailable("the server is shutting down");
                }
                HttpIo.json(ex, 200, Json.object());
            }
            case "/version" -> {
                get(method, path);
                HttpIo.json(ex, 200, Json.object().put("version", OpenAiServer.VERSION));
            }
            case "/tokenize" -> tokenize(ex, post(ex, method, path));
            case "/detokenize" -> detokenize(ex, post(ex, method, path));
            case "/reset_prefix_cache" -> {
                requirePost(method, path);
                resetPrefixCache(ex);
                HttpIo.json(ex, 200, Json.object());
            }
            case "/metrics" -> {
                get(method, path);
                HttpHandler m = metrics;
                if (m == null) {
                    throw ApiError.notFound("metrics are not enabled on this server", "route_not_found");
                }
                m.handle(ex);
            }
            default -> {
                if (path.startsWith("/v1/models/")) {
                    get(method, path);
                    model(ex, path.substring("/v1/models/".length()));
                    return;
                }
                throw ApiError.notFound("no route " + method + " " + path, "route_not_found");
            }
        }
    }

    /**
     * The request's path with repeated slashes made one, as most servers do ({@code curl $U//v1/models}
     * with a base URL ending in a slash). A target starting {@code //} parses as an authority
     * ({@code //v1/models}: host {@code v1}, path {@code /models}), which is taken back into the path.
     */
    static String path(java.net.URI target) {
        String p = target.getScheme() == null && target.getAuthority() != null
                ? "//" + target.getAuthority() + (target.getPath() == null ? "" : target.getPath())
                : target.getPath();
        return p == null || p.isEmpty() ? "/" : p.replaceAll("/{2,}", "/");
    }

    /** The methods a route takes, for {@code Allow}; null for no route. */
    private static String allowed(String path) {
        return switch (path) {
            case "/v1/completions", "/v1/chat/completions", "/tokenize", "/detokenize", "/reset_prefix_cache" -> POST;
            case "/v1/models", "/health", "/version", "/metrics" -> GET;
            default -> path.startsWith("/v1/models/") ? GET : null;
        };
    }

    private static final String GET = "GET, HEAD, OPTIONS";
    private static final String POST = "POST, OPTIONS";

    /** OPTIONS: 204 with the route's {@code Allow} (no key needed: it tells nothing but the methods); 404 for no route. */
    private static void options(HttpExchange ex, String path) throws ApiError, IOException {
        String allow = allowed(path);
        if (allow == null) {
            throw ApiError.notFound("no route OPTIONS " + path, "route_not_found");
        }
        ex.getResponseHeaders().set("Allow", allow);
        ex.sendResponseHeaders(204, -1);
    }

    private static boolean needsKey(String path) {
        return path.startsWith("/v1/") || path.equals("/tokenize") || path.equals("/detokenize")
                || path.equals("/reset_prefix_cache");
    }

    private void checkKey(HttpExchange ex) throws ApiError {
        if (config.apiKey() == null) {
            return;
        }
        if (!MessageDigest.isEqual(config.apiKey().getBytes(StandardCharsets.UTF_8),
                bearerToken(ex.getRequestHeaders().getFirst("Authorization")).getBytes(StandardCharsets.UTF_8))) {
            throw ApiError.unauthorized();
        }
    }

    /**
     * The credentials of an {@code Authorization: Bearer <token>} header, or "" for none: the
     * scheme's name is case-insensitive (RFC 7235 §2.1: {@code bearer} and {@code BEARER} too), and
     * spaces around the token are dropped.
     */
    static String bearerToken(String header) {
        String h = header == null ? "" : header.strip();
        int space = h.indexOf(' ');
        return space > 0 && h.substring(0, space).equalsIgnoreCase("Bearer") ? h.substring(space + 1).strip() : "";
    }

    private JsonNode post(HttpExchange ex, String method, String path) throws ApiError, IOException {
        requirePost(method, path);
        return BodyReader.readObject(ex, config.maxBodyBytes());
    }

    /** GET, or HEAD: answered as GET without the body ({@link HttpIo#body}). */
    private static void get(String method, String path) throws ApiError {
        if (!method.equals("GET") && !method.equals("HEAD")) {
            throw ApiError.methodNotAllowed(method, path, GET);
        }
    }

    private static void requirePost(String method, String path) throws ApiError {
        if (!method.equals("POST")) {
            throw ApiError.methodNotAllowed(method, path, POST);
        }
    }

    private ObjectNode modelEntry() {
        ObjectNode m = Json.object();
        m.put("id", model.modelName());
        m.put("object", "model");
        m.put("created", created);
        m.put("owned_by", "kvtier");
        m.put("max_model_len", loop.contextLimit().positions());
        return m;
    }

    private ObjectNode models() {
        ObjectNode o = Json.object();
        o.put("object", "list");
        o.putArray("data").add(modelEntry());
        return o;
    }

    private void model(HttpExchange ex, String id) throws ApiError, IOException {
        if (!id.equals(model.modelName())) {
            throw ApiError.notFound("the model '" + id + "' does not exist", "model_not_found");
        }
        HttpIo.json(ex, 200, modelEntry());
    }

    /** vLLM's shape: {@code {"tokens": [...], "count": n, "max_model_len": m}}. */
    private void tokenize(HttpExchange ex, JsonNode body) throws ApiError, IOException {
        int[] ids = parser.tokenize(body);
        ObjectNode o = Json.object();
        ArrayNode t = o.putArray("tokens");
        for (int id : ids) {
            t.add(id);
        }
        o.put("count", ids.length);
        o.put("max_model_len", loop.contextLimit().positions());
        HttpIo.json(ex, 200, o);
    }

    /**
     * {@code {"tokens": [ids]}} to {@code {"prompt": text}}, control tokens written as their text
     * (vLLM keeps special tokens here), so that {@code /tokenize} of the text gives the ids back.
     */
    private void detokenize(HttpExchange ex, JsonNode body) throws ApiError, IOException {
        JsonNode t = body.get("tokens");
        if (t == null || !t.isArray()) {
            throw ApiError.badRequest("tokens must be an array of token ids", "tokens");
        }
        int[] ids = parser.tokenIds(t, "tokens");
        HttpIo.json(ex, 200, Json.object().put("prompt", model.detokenize(ids)));
    }

    /**
     * vLLM's {@code /reset_prefix_cache}: drops the device prefix cache; the offload tiers keep their
     * entries (a later request loads from them). With {@code ?include_offload=true} every tier entry
     * goes too; {@code false} is the default. Any other value, a repeated or unknown parameter is a
     * 400 naming it: a typo must not quietly keep the tiers the client asked to drop.
     */
    private void resetPrefixCache(HttpExchange ex) throws ApiError, InterruptedException {
        boolean all = QueryParams.parse(ex.getRequestURI().getRawQuery(), java.util.Set.of("include_offload"))
                .bool("include_offload", false);
        try {
            loop.resetPrefixCache(all).get();
        } catch (ExecutionException e) {
            throw ApiError.unavailable("the engine has stopped: " + e.getCause().getMessage());
        }
    }
}

package io.kvtier.server;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * A route's query parameters ({@code ?a=1&b=true}), checked against the names the route knows.
 * Booleans are exactly {@code true} or {@code false}, as JSON booleans are in request bodies
 * ({@link RequestParser}): {@code yes}, {@code TRUE}, {@code 1} or an empty value are a 400.
 */
final class QueryParams {

    private final Map<String, String> values;

    private QueryParams(Map<String, String> values) {
        this.values = values;
    }

    /**
     * Parses a raw (still percent-encoded) query string; null or empty is no parameter.
     *
     * @param known the parameter names the route accepts
     * @throws ApiError 400 naming an unknown or repeated parameter, or one that is not percent-encoded right
     */
    static QueryParams parse(String rawQuery, Set<String> known) throws ApiError {
        Map<String, String> values = new HashMap<>();
        if (rawQuery == null || rawQuery.isEmpty()) {
            return new QueryParams(values);
        }
        for (String pair : rawQuery.split("&")) {
            if (pair.isEmpty()) {
                continue; // "a=1&&b=2", a trailing '&'
            }
            int eq = pair.indexOf('=');
            String name = decode(eq < 0 ? pair : pair.substring(0, eq), pair);
            String value = eq < 0 ? null : decode(pair.substring(eq + 1), name);
            if (!known.contains(name)) {
                throw ApiError.badRequest("unknown query parameter '" + name + "' (this route takes "
                        + String.join(", ", new java.util.TreeSet<>(known)) + ")", name);
            }
            if (values.putIfAbsent(name, value == null ? "" : value) != null) {
                throw ApiError.badRequest("query parameter " + name + " is given more than once", name);
            }
        }
        return new QueryParams(values);
    }

    /**
     * The boolean parameter {@code name}, {@code dflt} when absent.
     *
     * @throws ApiError 400 naming {@code name} unless its value is exactly {@code true} or {@code false}
     */
    boolean bool(String name, boolean dflt) throws ApiError {
        String v = values.get(name);
        if (v == null) {
            return dflt;
        }
        return switch (v) {
            case "true" -> true;
            case "false" -> false;
            default -> throw ApiError.badRequest(name + " must be true or false, got '" + v + "'", name);
        };
    }

    private static String decode(String s, String param) throws ApiError {
        try {
            return URLDecoder.decode(s, StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw ApiError.badRequest("query parameter " + param + " is not percent-encoded right: " + e.getMessage(), param);
        }
    }
}

package io.kvtier.cli;

import java.net.http.HttpRequest;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * The API key and its three sources: {@code serve} requires it of its clients, {@code bench serve
 * --url} sends it to a server that requires one. {@link #key()} checks them (one line, exit 2).
 */
public final class ApiKeyOptions {

    @Option(names = "--api-key", paramLabel = "KEY",
            description = "the API key, 'Authorization: Bearer KEY' (visible in the process list: prefer --api-key-file or --api-key-env)")
    String apiKey;

    @Option(names = "--api-key-file", paramLabel = "FILE", description = "read the API key from FILE (surrounding whitespace dropped)")
    Path apiKeyFile;

    @Option(names = "--api-key-env", paramLabel = "VAR", description = "read the API key from the environment variable VAR")
    String apiKeyEnv;

    /** The flags, for a command that takes them only with another. */
    static final String[] FLAGS = {"--api-key", "--api-key-file", "--api-key-env"};

    /** {@code request} with {@code key} as {@code Authorization: Bearer}; without it when {@code key} is null. */
    static HttpRequest bearer(HttpRequest.Builder request, String key) {
        return key == null ? request.build() : request.header("Authorization", "Bearer " + key).build();
    }

    /** The key from the one source given, or null if none; {@link BadInputException} if two are given or the key is empty. */
    String key() {
        int sources = (apiKey != null ? 1 : 0) + (apiKeyFile != null ? 1 : 0) + (apiKeyEnv != null ? 1 : 0);
        if (sources > 1) {
            throw new BadInputException("give one of --api-key, --api-key-file, --api-key-env");
        }
        String key = apiKey;
        if (apiKeyFile != null) {
            key = Checks.secretFile(apiKeyFile, "--api-key-file").strip();
        } else if (apiKeyEnv != null) {
            key = System.getenv(apiKeyEnv);
            if (key == null) {
                throw new BadInputException("--api-key-env " + apiKeyEnv + ": the variable is not set");
            }
            key = key.strip();
        }
        if (key != null && key.isEmpty()) {
            throw new BadInputException("the API key is empty (" + (apiKeyFile != null ? "--api-key-file " + apiKeyFile
                    : apiKeyEnv != null ? "--api-key-env " + apiKeyEnv : "--api-key") + ")");
        }
        return key;
    }
}

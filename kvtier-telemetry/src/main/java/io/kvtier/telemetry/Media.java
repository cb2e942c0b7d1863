package io.kvtier.telemetry;

import java.util.Locale;

/**
 * vLLM's names for where KV lives ({@code medium} in KV events, the ends of a {@code transfer_type}
 * in metrics): the device pool is {@code GPU} (it plays that role), the host tier {@code CPU},
 * the disk tier {@code STORAGE}.
 */
final class Media {

    private Media() {
    }

    /** The medium of a kvtier tier name ({@code device}, {@code host}, {@code disk}); another name upper-cased. */
    static String of(String tier) {
        return switch (tier) {
            case "device" -> "GPU";
            case "host" -> "CPU";
            case "disk" -> "STORAGE";
            default -> tier.toUpperCase(Locale.ROOT);
        };
    }
}

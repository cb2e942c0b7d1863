package io.kvtier.tier.remote;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** How a store's URL is shown in a line about reaching it. */
class RemoteSettingsTest {

    /** A URL without a port says the one tried (a new user's trial: "cannot reach redis://127.0.0.1" named none). */
    @Test
    void aUrlWithoutAPortShowsTheDefaultOne() {
        assertThat(RemoteSettings.withPort("redis://127.0.0.1")).isEqualTo("redis://127.0.0.1 (port 6379)");
        assertThat(RemoteSettings.withPort("rediss://bob@cache.example/3")).isEqualTo("rediss://bob@cache.example/3 (port 6379)");
        assertThat(RemoteSettings.withPort("redis://[::1]")).isEqualTo("redis://[::1] (port 6379)");
        assertThat(RemoteSettings.withPort("redis://127.0.0.1:7000")).isEqualTo("redis://127.0.0.1:7000");
        assertThat(RemoteSettings.withPort("redis://[::1]:6380/2")).isEqualTo("redis://[::1]:6380/2");
    }
}

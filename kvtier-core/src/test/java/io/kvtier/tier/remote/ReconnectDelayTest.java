package io.kvtier.tier.remote;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** After a long outage the client retries at least once a second (Lettuce's default grows to 30 s). */
class ReconnectDelayTest {

    @Test
    void backOffGrowsFromMillisecondsAndStopsAtTheCap() {
        Delay d = LettuceResources.reconnectDelay();
        assertThat(d.createDelay(1)).isEqualTo(Duration.ofMillis(1));
        assertThat(d.createDelay(4)).isEqualTo(Duration.ofMillis(8));
        assertThat(d.createDelay(11)).isEqualTo(Duration.ofMillis(1000));
        assertThat(d.createDelay(40)).isEqualTo(LettuceResources.RECONNECT_CAP).isEqualTo(Duration.ofSeconds(1));
    }

    @Test
    void theClientsResourcesUseIt() {
        ClientResources r = LettuceResources.create();
        try {
            assertThat(r.reconnectDelay().createDelay(40)).isEqualTo(Duration.ofSeconds(1));
        } finally {
            r.shutdown(0, 1, java.util.concurrent.TimeUnit.SECONDS);
        }
    }
}

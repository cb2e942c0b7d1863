package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.tier.remote.OwnRedis;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A bench's keys go, every other key stays (the remote TTFT figure left 73 MB a repeat behind). */
class BenchKeysTest {

    @TempDir
    Path dir;

    @Test
    void onlyTheTenantsKeysAreDeletedAsTheAclUser() throws Exception {
        try (OwnRedis r = OwnRedis.start(dir.resolve("r"), "user bob on >bob-pw ~* +@all", "user default off")) {
            String[] auth = {"--user", "bob", "--pass", "bob-pw", "--no-auth-warning"};
            java.util.List<String> mset = new java.util.ArrayList<>(java.util.List.of(auth));
            mset.add("MSET");
            for (int i = 0; i < 2500; i++) { // more than one SCAN page
                mset.addAll(java.util.List.of("kvt:v1:bench1a2b:ns:k" + i, "x"));
            }
            assertThat(r.cli(mset.toArray(String[]::new))).isEqualTo("OK");
            r.cli(concat(auth, "SET", "kvt:v1:bench1a2bc:ns:k", "other tenant"));
            r.cli(concat(auth, "SET", "kvt:v1:default:ns:k", "other tenant"));
            long before = Long.parseLong(r.cli(concat(auth, "DBSIZE")));
            long deleted = BenchKeys.deleteTenant(io.kvtier.tier.remote.RemoteSettings.of(
                    java.util.List.of("redis://bob@127.0.0.1:" + r.port()), false, "bench", "bob-pw"), "bench1a2b");
            assertThat(before).isEqualTo(2502);
            assertThat(deleted).isEqualTo(2500);
            assertThat(r.cli(concat(auth, "DBSIZE"))).isEqualTo("2");
            assertThat(r.cli(concat(auth, "GET", "kvt:v1:bench1a2bc:ns:k"))).isEqualTo("other tenant");
        }
    }

    private static String[] concat(String[] a, String... b) {
        String[] r = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, r, a.length, b.length);
        return r;
    }
}

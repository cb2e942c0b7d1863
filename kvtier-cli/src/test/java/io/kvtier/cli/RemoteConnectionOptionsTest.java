package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the remote connection flags say when a server refuses the client's credentials, and empty passwords. */
class RemoteConnectionOptionsTest {

    /** trial26: the variable set but empty meant no password (the tier off at NOAUTH), an empty file exit 2. */
    @Test
    void anEmptyPasswordVariableIsRefusedAsAnEmptyFileIs(@TempDir Path dir) throws Exception {
        assertThat(RemoteConnectionOptions.passwordFromEnv(null)).isNull();
        assertThat(RemoteConnectionOptions.passwordFromEnv("s3cret")).isEqualTo("s3cret");
        for (String blank : new String[] {"", "  "}) {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> RemoteConnectionOptions.passwordFromEnv(blank))
                    .isInstanceOf(BadInputException.class)
                    .hasMessage("KVTIER_REMOTE_PASSWORD is set but empty: give the password in it, or unset it for none");
        }
        // As users meet it: a process with the variable set and empty, before any connection (the port is closed).
        Path err = dir.resolve("err.txt");
        ProcessBuilder pb = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-modules", "jdk.incubator.vector", "-cp", System.getProperty("java.class.path"), Main.class.getName(),
                "generate", "--max-tokens", "1", "--prompt", "a", "--host-cache-bytes", "4M", "--remote-url", "redis://127.0.0.1:1")
                .redirectError(err.toFile()).redirectOutput(ProcessBuilder.Redirect.DISCARD);
        pb.environment().put(RemoteConnectionOptions.PASSWORD_ENV, "");
        Process p = pb.start();
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).isEqualTo(2);
        assertThat(Files.readString(err).lines().filter(l -> l.startsWith("kvtier: ")).toList()).containsExactly(
                "kvtier: KVTIER_REMOTE_PASSWORD is set but empty: give the password in it, or unset it for none");
    }

    /** trial28: the file's password was strip()ped, so " pw" was sent as "pw"; only its trailing line ends go. */
    @Test
    void aPasswordFileLosesItsLineEndsOnly(@TempDir Path dir) throws Exception {
        assertThat(RemoteConnectionOptions.passwordInFile("s3cret\n")).isEqualTo("s3cret");
        assertThat(RemoteConnectionOptions.passwordInFile("s3cret\r\n\n")).isEqualTo("s3cret");
        assertThat(RemoteConnectionOptions.passwordInFile(" s3 cret\t")).isEqualTo(" s3 cret\t");
        assertThat(RemoteConnectionOptions.passwordInFile("s3cret")).isEqualTo("s3cret");
        Path file = Files.writeString(dir.resolve("pw"), " s3cret \n");
        assertThat(RemoteConnectionOptions.readPassword(file)).isEqualTo(" s3cret ");
        for (String blank : new String[] {"", "\n", "  \r\n"}) {
            Path f = Files.writeString(dir.resolve("blank"), blank);
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> RemoteConnectionOptions.readPassword(f))
                    .isInstanceOf(BadInputException.class).hasMessage("--remote-password-file " + f + " is empty");
        }
    }

    /** The advice after a refusal of the credentials names a password only where one was given or asked for. */
    @Test
    void authAdviceFitsWhatWasGiven() {
        String noauth = "NOAUTH Authentication required.";
        String wrongpass = "WRONGPASS invalid username-password pair or user is disabled.";
        String noPassword = "ERR AUTH <password> called without any password configured for the default user.";
        assertThat(RemoteConnectionOptions.authAdvice(noauth, null, false))
                .isEqualTo("the server wants a password: give it with --remote-password-file FILE (or KVTIER_REMOTE_PASSWORD)");
        assertThat(RemoteConnectionOptions.authAdvice(wrongpass, "--remote-password-file pw", true)).startsWith(
                "the server refused the password of --remote-password-file pw for the URL's user");
        assertThat(RemoteConnectionOptions.authAdvice(noPassword, "KVTIER_REMOTE_PASSWORD", false))
                .isEqualTo("the server has no password for user default: unset KVTIER_REMOTE_PASSWORD");
        assertThat(RemoteConnectionOptions.authAdvice(noPassword, null, false)).as("no password given").isNull();
        assertThat(RemoteConnectionOptions.authAdvice(wrongpass, null, false)).as("no password given").isNull();
        assertThat(RemoteConnectionOptions.authAdvice("NOPERM this user has no permissions", null, false)).isNull();
        assertThat(RemoteConnectionOptions.fitted("authentication failed (" + noauth + "): check the remote user and password",
                null, false)).isEqualTo("authentication failed (" + noauth + "): the server wants a password: give it with "
                + "--remote-password-file FILE (or KVTIER_REMOTE_PASSWORD)");
        assertThat(RemoteConnectionOptions.fitted("the server refused key k (NOPERM x): give this user access to ~k", null, false))
                .as("not about credentials: unchanged").isEqualTo("the server refused key k (NOPERM x): give this user access to ~k");
    }
}

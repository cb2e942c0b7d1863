package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** What the remote connection flags say when a server refuses the client's credentials. */
class RemoteConnectionOptionsTest {

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

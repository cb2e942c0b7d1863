package io.kvtier.tier.remote;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.util.Base64;
import java.util.concurrent.TimeUnit;

/**
 * A self-signed certificate for 127.0.0.1 (subject alternative name IP:127.0.0.1), made by the
 * running JDK's keytool, written as PEM files a TLS redis-server and a client read:
 * {@code cert.pem} (the certificate, also the CA a client trusts) and {@code key.pem} (PKCS#8).
 */
public record TlsFiles(Path cert, Path key) {

    public static TlsFiles create(Path dir, String name) throws Exception {
        Files.createDirectories(dir);
        Path store = dir.resolve(name + ".p12");
        char[] pw = "changeit".toCharArray();
        Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
        Process p = new ProcessBuilder(keytool.toString(), "-genkeypair", "-alias", "redis", "-keyalg", "RSA", "-keysize", "2048",
                "-validity", "2", "-dname", "CN=127.0.0.1", "-ext", "SAN=IP:127.0.0.1", "-keystore", store.toString(),
                "-storetype", "PKCS12", "-storepass", new String(pw)).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException("keytool failed: " + out);
        }
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            ks.load(in, pw);
        }
        Certificate cert = ks.getCertificate("redis");
        PrivateKey key = (PrivateKey) ks.getKey("redis", pw);
        Path certPem = dir.resolve(name + "-cert.pem");
        Path keyPem = dir.resolve(name + "-key.pem");
        Files.writeString(certPem, pem("CERTIFICATE", cert.getEncoded()));
        Files.writeString(keyPem, pem("PRIVATE KEY", key.getEncoded()));
        return new TlsFiles(certPem, keyPem);
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                .encodeToString(der) + "\n-----END " + type + "-----\n";
    }
}

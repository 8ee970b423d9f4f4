package kco.testbed;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.security.MessageDigest;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import javax.security.auth.callback.Callback;
import javax.security.auth.callback.UnsupportedCallbackException;
import javax.security.auth.login.AppConfigurationEntry;
import org.apache.kafka.common.security.auth.AuthenticateCallbackHandler;
import org.apache.kafka.common.security.oauthbearer.OAuthBearerToken;
import org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallback;

/**
 * The test bed's stand-in for Amazon MSK's IAM listener: a SASL/OAUTHBEARER server callback
 * handler that takes MSK's token (what AWS's signer libraries and kco send: a SigV4 presigned
 * URL of {@code https://kafka.<region>.amazonaws.com/?Action=kafka-cluster%3AConnect},
 * base64url without padding) and checks it as SigV4 says: the access key id is one of the
 * test credentials, the signature recomputed with its secret key matches, the action is
 * {@code kafka-cluster:Connect}, the host is {@code kafka.<region>.amazonaws.com} of the
 * credential scope's region (and of the listener's {@code region} option), the signing date
 * is the scope's, not in the future, and {@code X-Amz-Date + X-Amz-Expires} is not past.
 * {@code User-Agent} and {@code X-Amz-Signature} are not signed (AWS's signers add the first
 * after signing). A refusal says why, in the RFC 7628 error's status.
 *
 * <p>JAAS options of the listener's {@code OAuthBearerLoginModule}: {@code credentialsFile}
 * (a properties file, access key id = secret key), {@code region} (optional).
 */
public class MskIamValidator implements AuthenticateCallbackHandler {
    private static final DateTimeFormatter AMZ_DATE = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'");
    private static final long SKEW_SECONDS = 300;
    private static final long MAX_EXPIRES = 900;

    private final Properties keys = new Properties();
    private String region;

    @Override
    public void configure(Map<String, ?> configs, String saslMechanism, List<AppConfigurationEntry> jaasConfigEntries) {
        for (AppConfigurationEntry e : jaasConfigEntries) {
            Object file = e.getOptions().get("credentialsFile");
            if (file != null) {
                try (InputStream in = Files.newInputStream(Paths.get(file.toString()))) {
                    keys.load(in);
                } catch (IOException x) {
                    throw new IllegalStateException("cannot read " + file + ": " + x.getMessage(), x);
                }
            }
            Object r = e.getOptions().get("region");
            if (r != null) {
                region = r.toString();
            }
        }
        if (keys.isEmpty()) {
            throw new IllegalStateException("MskIamValidator: no credentialsFile with test credentials");
        }
    }

    @Override
    public void handle(Callback[] callbacks) throws IOException, UnsupportedCallbackException {
        for (Callback c : callbacks) {
            if (!(c instanceof OAuthBearerValidatorCallback)) {
                throw new UnsupportedCallbackException(c);
            }
            OAuthBearerValidatorCallback v = (OAuthBearerValidatorCallback) c;
            try {
                v.token(validate(v.tokenValue(), Instant.now()));
            } catch (Refused r) {
                v.error("invalid_token: " + r.getMessage(), null, null);
            }
        }
    }

    @Override
    public void close() {
    }

    static final class Refused extends Exception {
        Refused(String why) {
            super(why);
        }
    }

    /** The token's principal (its access key id) and lifetime, or why it is refused. */
    OAuthBearerToken validate(String token, Instant now) throws Refused {
        String url;
        try {
            url = new String(Base64.getUrlDecoder().decode(token), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw new Refused("the token is not base64url");
        }
        URI uri;
        try {
            uri = new URI(url);
        } catch (Exception e) {
            throw new Refused("the token is not a URL");
        }
        Map<String, String> q = new TreeMap<>();
        String raw = uri.getRawQuery() == null ? "" : uri.getRawQuery();
        for (String pair : raw.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            String k = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
            String val = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
            if (q.put(k, val) != null) {
                throw new Refused("parameter " + k + " is given twice");
            }
        }
        if (!"https".equals(uri.getScheme()) || !"/".equals(uri.getPath())) {
            throw new Refused("not an https URL of path /");
        }
        if (!"kafka-cluster:Connect".equals(q.get("Action"))) {
            throw new Refused("the action is " + q.get("Action") + ", not kafka-cluster:Connect");
        }
        if (!"AWS4-HMAC-SHA256".equals(q.get("X-Amz-Algorithm"))) {
            throw new Refused("X-Amz-Algorithm is not AWS4-HMAC-SHA256");
        }
        String credential = need(q, "X-Amz-Credential");
        String[] scope = credential.split("/");
        if (scope.length != 5 || !"kafka-cluster".equals(scope[3]) || !"aws4_request".equals(scope[4])) {
            throw new Refused("X-Amz-Credential is not <key>/<date>/<region>/kafka-cluster/aws4_request");
        }
        String akid = scope[0];
        String day = scope[1];
        String scopeRegion = scope[2];
        String secret = keys.getProperty(akid);
        if (secret == null) {
            throw new Refused("unknown access key id " + akid);
        }
        if (region != null && !region.equals(scopeRegion)) {
            throw new Refused("signed for region " + scopeRegion + ", the cluster is in " + region);
        }
        String host = "kafka." + scopeRegion + ".amazonaws.com";
        if (!host.equals(uri.getHost()) || uri.getPort() != -1) {
            throw new Refused("the host is " + uri.getHost() + ", not " + host);
        }
        if (!"host".equals(q.get("X-Amz-SignedHeaders"))) {
            throw new Refused("X-Amz-SignedHeaders is not host");
        }
        String amzDate = need(q, "X-Amz-Date");
        Instant signed;
        try {
            signed = LocalDateTime.parse(amzDate, AMZ_DATE).toInstant(ZoneOffset.UTC);
        } catch (Exception e) {
            throw new Refused("X-Amz-Date is not yyyyMMddTHHmmssZ");
        }
        if (!amzDate.startsWith(day)) {
            throw new Refused("X-Amz-Date is not of the credential scope's day");
        }
        long expires;
        try {
            expires = Long.parseLong(need(q, "X-Amz-Expires"));
        } catch (NumberFormatException e) {
            throw new Refused("X-Amz-Expires is not a number");
        }
        if (expires < 1 || expires > MAX_EXPIRES) {
            throw new Refused("X-Amz-Expires is not 1 to " + MAX_EXPIRES);
        }
        if (signed.isAfter(now.plusSeconds(SKEW_SECONDS))) {
            throw new Refused("signed in the future (" + signed + ")");
        }
        Instant end = signed.plusSeconds(expires);
        if (!now.isBefore(end)) {
            throw new Refused("the token expired at " + end);
        }
        List<String> canonicalQuery = new ArrayList<>();
        for (Map.Entry<String, String> e : q.entrySet()) {
            if (e.getKey().equals("X-Amz-Signature") || e.getKey().equals("User-Agent")) {
                continue;
            }
            canonicalQuery.add(encode(e.getKey()) + "=" + encode(e.getValue()));
        }
        Collections.sort(canonicalQuery);
        String canonical = "GET\n/\n" + String.join("&", canonicalQuery) + "\nhost:" + host + "\n\nhost\n" + hex(sha256(""));
        String scopeText = day + "/" + scopeRegion + "/kafka-cluster/aws4_request";
        String toSign = "AWS4-HMAC-SHA256\n" + amzDate + "\n" + scopeText + "\n" + hex(sha256(canonical));
        byte[] key = hmac(("AWS4" + secret).getBytes(StandardCharsets.UTF_8), day);
        key = hmac(key, scopeRegion);
        key = hmac(key, "kafka-cluster");
        key = hmac(key, "aws4_request");
        String expected = hex(hmac(key, toSign));
        String given = need(q, "X-Amz-Signature");
        if (!MessageDigest.isEqual(expected.getBytes(StandardCharsets.US_ASCII), given.getBytes(StandardCharsets.US_ASCII))) {
            throw new Refused("the signature does not match (signed with another secret key?)");
        }
        long start = signed.toEpochMilli();
        long lifetime = end.toEpochMilli();
        return new OAuthBearerToken() {
            @Override
            public String value() {
                return token;
            }

            @Override
            public Set<String> scope() {
                return Collections.emptySet();
            }

            @Override
            public long lifetimeMs() {
                return lifetime;
            }

            @Override
            public String principalName() {
                return akid;
            }

            @Override
            public Long startTimeMs() {
                return start;
            }
        };
    }

    private static String need(Map<String, String> q, String name) throws Refused {
        String v = q.get(name);
        if (v == null || v.isEmpty()) {
            throw new Refused("no " + name);
        }
        return v;
    }

    /** SigV4's URI encoding: every byte but A-Z a-z 0-9 - _ . ~ as %XX. */
    static String encode(String s) {
        StringBuilder b = new StringBuilder();
        for (byte c : s.getBytes(StandardCharsets.UTF_8)) {
            if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' || c == '~') {
                b.append((char) c);
            } else {
                b.append(String.format("%%%02X", c & 0xff));
            }
        }
        return b.toString();
    }

    private static byte[] sha256(String s) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static byte[] hmac(byte[] key, String data) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            return mac.doFinal(data.getBytes(StandardCharsets.UTF_8));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static String hex(byte[] b) {
        StringBuilder s = new StringBuilder();
        for (byte x : b) {
            s.append(String.format("%02x", x & 0xff));
        }
        return s.toString();
    }

    /**
     * {@code java kco.testbed.MskIamValidator CREDENTIALS_FILE REGION TOKEN [EPOCH_SECONDS]}:
     * prints {@code accepted <principal>} (exit 0) or {@code refused: <why>} (exit 1), checked
     * at EPOCH_SECONDS (default now); for checking the validator without a broker.
     */
    public static void main(String[] args) throws Exception {
        MskIamValidator v = new MskIamValidator();
        try (InputStream in = Files.newInputStream(Paths.get(args[0]))) {
            v.keys.load(in);
        }
        v.region = args[1];
        Instant now = args.length > 3 ? Instant.ofEpochSecond(Long.parseLong(args[3])) : Instant.now();
        try {
            System.out.println("accepted " + v.validate(args[2], now).principalName());
        } catch (Refused r) {
            System.out.println("refused: " + r.getMessage());
            System.exit(1);
        }
    }
}

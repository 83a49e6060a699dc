// Hand-written: the tokens a Java service sends, signed by its own key as Python services sign
// theirs (accord.protocol.auth.tokens.service_token, docs/service-keys.md).
package dev.accord.contract.auth;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.ECDSASigner;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.interfaces.ECPrivateKey;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;

/**
 * ES256 tokens of {@code svc:NAME}, signed by the newest key of NAME's key ring that is not
 * retiring ({@code KEYS_DIR/NAME/keyring.json}, written by {@code accord keys rotate NAME}), its
 * {@code kid} in the header, with every claim a verifier requires: {@code iss aud sub roles app
 * jti iat exp}, and {@code scope} when asking for fewer grants than the verifier's table gives.
 * The ring is read again for every token, so a rotation needs no restart; a token is reused
 * until half its life, as Python does.
 */
public final class ServiceTokenSigner {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final Path ring;
    private final String service;
    private final String audience;
    private final long ttlSeconds;
    private String cached;
    private String cachedKid;
    private Set<String> cachedScopes;
    private long renewAt;

    public ServiceTokenSigner(Path keysDir, String service, String audience, long ttlSeconds) {
        this.ring = keysDir.resolve(service).resolve("keyring.json");
        this.service = service;
        this.audience = audience;
        this.ttlSeconds = ttlSeconds;
    }

    /** A token asking for {@code scopes} (none: every grant the verifier's table gives). */
    public synchronized String token(Set<String> scopes) {
        JsonNode signer = signer();
        String kid = signer.get("kid").asText();
        long now = System.currentTimeMillis() / 1000;
        if (cached != null && kid.equals(cachedKid) && scopes.equals(cachedScopes) && now < renewAt) {
            return cached;
        }
        JWTClaimsSet.Builder claims = new JWTClaimsSet.Builder()
                .issuer("accord")
                .audience(audience)
                .subject("svc:" + service)
                .claim("roles", List.of(Principal.ROLE_SERVICE))
                .claim("app", "accord")
                .jwtID(UUID.randomUUID().toString().replace("-", ""))
                .issueTime(new Date(now * 1000))
                .expirationTime(new Date((now + ttlSeconds) * 1000));
        if (!scopes.isEmpty()) {
            claims.claim("scope", String.join(" ", new TreeSet<>(scopes)));
        }
        SignedJWT jwt = new SignedJWT(
                new JWSHeader.Builder(JWSAlgorithm.ES256).keyID(kid).type(JOSEObjectType.JWT).build(),
                claims.build());
        try {
            jwt.sign(new ECDSASigner(privateKey(signer.get("private_pem").asText())));
        } catch (JOSEException | GeneralSecurityException e) {
            throw new IllegalStateException(ring + ": key " + kid + " cannot sign", e);
        }
        cached = jwt.serialize();
        cachedKid = kid;
        cachedScopes = Set.copyOf(scopes);
        renewAt = now + ttlSeconds / 2;
        return cached;
    }

    private JsonNode signer() {
        JsonNode keys;
        try {
            keys = JSON.readTree(Files.readString(ring)).path("keys");
        } catch (IOException e) {
            throw new IllegalStateException(
                    "service " + service + " has no key ring at " + ring + ": run `accord keys rotate " + service + "`", e);
        }
        JsonNode newest = null;
        for (JsonNode key : keys) {
            if (key.path("retires_at").isNull() || key.path("retires_at").isMissingNode()) {
                newest = key;  // oldest first: the last active one signs
            }
        }
        if (newest == null) {
            throw new IllegalStateException("service " + service + " has no signing key: run `accord keys rotate " + service + "`");
        }
        return newest;
    }

    private static ECPrivateKey privateKey(String pem) throws GeneralSecurityException {
        String body = pem.replaceAll("-----[A-Z ]+-----", "").replaceAll("\\s", "");
        return (ECPrivateKey) KeyFactory.getInstance("EC")
                .generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder().decode(body)));
    }
}

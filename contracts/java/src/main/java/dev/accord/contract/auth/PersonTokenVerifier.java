// Hand-written: people's tokens, as accord.protocol.auth.verify checks them (docs/auth.md).
package dev.accord.contract.auth;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSVerifier;
import com.nimbusds.jose.crypto.MACVerifier;
import com.nimbusds.jose.jwk.source.JWKSource;
import com.nimbusds.jose.proc.JWSVerificationKeySelector;
import com.nimbusds.jose.proc.SecurityContext;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import com.nimbusds.jwt.proc.DefaultJWTClaimsVerifier;
import com.nimbusds.jwt.proc.DefaultJWTProcessor;
import dev.accord.contract.AccordError;
import dev.accord.contract.generated.ErrorCode;
import java.nio.charset.StandardCharsets;
import java.text.ParseException;
import java.util.Date;
import java.util.List;
import java.util.Set;

/**
 * A person's bearer token: HS256 with the shared secret (development: `accord token`), or RS256 /
 * ES256 with the identity provider's JWKS ({@code ACCORD_JWKS}). The key is chosen by the
 * token's {@code alg}, so a public key is never used as an HMAC secret; its {@code iss} must be
 * one of the accepted issuers, its {@code aud} the audience, and {@code sub iat exp jti} present.
 * A token with the role {@code service} is never accepted here: only a service's own key may
 * sign one ({@link ServiceTokenVerifier}).
 */
public final class PersonTokenVerifier {
    /** Seconds of clock skew allowed, as Python's verifier (LEEWAY_S). */
    static final int LEEWAY_S = 5;
    private final byte[] secret;
    private final JWKSource<SecurityContext> keys;
    private final Set<String> issuers;
    private final String audience;

    /** {@code secret} or {@code keys} may be null: that way of signing is then refused. */
    public PersonTokenVerifier(String secret, JWKSource<SecurityContext> keys, Set<String> issuers,
            String audience) {
        this.secret = secret == null || secret.isEmpty() ? null : secret.getBytes(StandardCharsets.UTF_8);
        this.keys = keys;
        this.issuers = Set.copyOf(issuers);
        this.audience = audience;
    }

    public Principal verify(String token) {
        SignedJWT jwt;
        try {
            jwt = SignedJWT.parse(token);
        } catch (ParseException e) {
            throw new AccordError(ErrorCode.UNAUTHENTICATED, "malformed bearer token");
        }
        JWSAlgorithm alg = jwt.getHeader().getAlgorithm();
        JWTClaimsSet claims;
        try {
            if (JWSAlgorithm.HS256.equals(alg) && secret != null) {
                JWSVerifier verifier = new MACVerifier(secret);
                if (!jwt.verify(verifier)) {
                    throw new AccordError(ErrorCode.UNAUTHENTICATED, "bearer token is invalid");
                }
                claims = jwt.getJWTClaimsSet();
                checker().verify(claims, null);
            } else if ((JWSAlgorithm.RS256.equals(alg) || JWSAlgorithm.ES256.equals(alg)) && keys != null) {
                DefaultJWTProcessor<SecurityContext> processor = new DefaultJWTProcessor<>();
                processor.setJWSKeySelector(new JWSVerificationKeySelector<>(alg, keys));
                processor.setJWTClaimsSetVerifier(checker());
                claims = processor.process(jwt, null);
            } else {
                throw new AccordError(ErrorCode.UNAUTHENTICATED,
                        "bearer token algorithm '" + alg + "' is not accepted");
            }
        } catch (AccordError e) {
            throw e;
        } catch (JOSEException | ParseException | com.nimbusds.jose.proc.BadJOSEException e) {
            throw new AccordError(ErrorCode.UNAUTHENTICATED, "bearer token is invalid or expired");
        }
        if (!issuers.contains(claims.getIssuer())) {
            throw new AccordError(ErrorCode.UNAUTHENTICATED, "the token's iss is not an accepted issuer");
        }
        try {
            List<String> listed = claims.getStringListClaim("roles");
            List<String> roles = listed == null ? List.of() : List.copyOf(listed);
            if (roles.contains(Principal.ROLE_SERVICE)) {
                throw new AccordError(ErrorCode.UNAUTHENTICATED, "a service's token must be signed by its own key");
            }
            String app = claims.getStringClaim("app");
            String scope = claims.getStringClaim("scope");
            Set<String> grants = scope == null || scope.isBlank() ? Set.of() : Set.of(scope.trim().split("\\s+"));
            return new Principal(claims.getSubject(), roles, app == null ? "accord" : app, grants, Set.of());
        } catch (ParseException e) {
            throw new AccordError(ErrorCode.UNAUTHENTICATED, "the bearer token's claims are malformed");
        }
    }

    private DefaultJWTClaimsVerifier<SecurityContext> checker() {
        DefaultJWTClaimsVerifier<SecurityContext> verifier = new DefaultJWTClaimsVerifier<>(
                audience, null, Set.of("iss", "sub", "iat", "exp", "jti")) {
            @Override
            public void verify(JWTClaimsSet claims, SecurityContext context)
                    throws com.nimbusds.jwt.proc.BadJWTException {
                super.verify(claims, context);
                Date issued = claims.getIssueTime();
                if (issued.getTime() > System.currentTimeMillis() + LEEWAY_S * 1000L) {
                    throw new com.nimbusds.jwt.proc.BadJWTException("iat is in the future");
                }
            }
        };
        verifier.setMaxClockSkew(LEEWAY_S);
        return verifier;
    }
}

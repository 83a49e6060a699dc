// Hand-written: service tokens verified by JWKS with the trust table (docs/service-keys.md).
package dev.accord.contract.auth;

import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.proc.JWSVerificationKeySelector;
import com.nimbusds.jose.proc.SecurityContext;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import com.nimbusds.jwt.proc.DefaultJWTClaimsVerifier;
import com.nimbusds.jwt.proc.DefaultJWTProcessor;
import dev.accord.contract.AccordError;
import dev.accord.contract.generated.ErrorCode;
import java.text.ParseException;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * A bearer token {@code svc:NAME} is accepted only when NAME is in the trust table and the token
 * is signed ES256 by a key of NAME's JWKS (found by {@code kid}), names the entry's issuer and
 * the audience, carries {@code exp iat jti sub} and has not expired. Anything else is
 * UNAUTHENTICATED. A person's token (no {@code svc:} subject) is not accepted here.
 */
public final class ServiceTokenVerifier {
    private static final String PREFIX = "svc:";
    private final TrustTable trust;
    private final String audience;

    public ServiceTokenVerifier(TrustTable trust, String audience) {
        this.trust = trust;
        this.audience = audience;
    }

    public Principal verify(String token) {
        String subject;
        try {
            subject = SignedJWT.parse(token).getJWTClaimsSet().getSubject();
        } catch (ParseException e) {
            throw new AccordError(ErrorCode.UNAUTHENTICATED, "the bearer token is not a signed JWT");
        }
        TrustTable.Entry entry = subject != null && subject.startsWith(PREFIX)
                ? trust.get(subject.substring(PREFIX.length())) : null;
        if (entry == null) {
            throw new AccordError(ErrorCode.UNAUTHENTICATED, "the token's subject is not a trusted service");
        }
        DefaultJWTProcessor<SecurityContext> processor = new DefaultJWTProcessor<>();
        processor.setJWSKeySelector(new JWSVerificationKeySelector<>(JWSAlgorithm.ES256, entry.keys()));
        DefaultJWTClaimsVerifier<SecurityContext> checks = new DefaultJWTClaimsVerifier<>(
                audience,
                new JWTClaimsSet.Builder().issuer(entry.issuer()).subject(subject).build(),
                Set.of("exp", "iat", "jti", "sub"));
        checks.setMaxClockSkew(PersonTokenVerifier.LEEWAY_S);  // Python's leeway, not nimbus's 60 s
        processor.setJWTClaimsSetVerifier(checks);
        JWTClaimsSet claims;
        try {
            claims = processor.process(token, null);
        } catch (Exception e) {  // any signature, key or claim failure reads the same to the caller
            throw new AccordError(ErrorCode.UNAUTHENTICATED, "the bearer token is invalid or expired");
        }
        List<String> roles;
        String app;
        String scope;
        try {
            List<String> listed = claims.getStringListClaim("roles");
            roles = listed == null ? List.of() : List.copyOf(listed);
            app = claims.getStringClaim("app");
            scope = claims.getStringClaim("scope");
        } catch (ParseException e) {
            throw new AccordError(ErrorCode.UNAUTHENTICATED, "the bearer token's claims are malformed");
        }
        if (!roles.contains(Principal.ROLE_SERVICE)) {
            throw new AccordError(ErrorCode.UNAUTHENTICATED, "a service's token must carry role service");
        }
        Set<String> grants = new LinkedHashSet<>(entry.grants());
        if (scope != null) {  // the token may ask for fewer grants than the table's, never more
            grants.retainAll(Set.of(scope.trim().split("\\s+")));
        }
        return new Principal(subject, roles, app == null ? "accord" : app, Set.copyOf(grants),
                entry.tenants());
    }
}

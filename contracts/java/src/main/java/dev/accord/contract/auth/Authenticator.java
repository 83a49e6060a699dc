// Hand-written: a request's bearer token to its verified principal, routed as Python routes it.
package dev.accord.contract.auth;

import com.nimbusds.jwt.SignedJWT;
import dev.accord.contract.AccordError;
import dev.accord.contract.generated.ErrorCode;
import java.text.ParseException;
import java.util.List;

/**
 * A token that asks to be a service (its {@code roles} name {@code service}) is verified by
 * the trust table and that service's own keys only; any other by the people's verifier, when
 * there is one. No credential, or an invalid one, is UNAUTHENTICATED.
 */
public final class Authenticator {
    private final ServiceTokenVerifier services;
    private final PersonTokenVerifier people;

    /** {@code people} may be null: a server that serves services only. */
    public Authenticator(ServiceTokenVerifier services, PersonTokenVerifier people) {
        this.services = services;
        this.people = people;
    }

    /** The principal of an {@code Authorization} header value. */
    public Principal authenticate(String authorization) {
        if (authorization == null || !authorization.regionMatches(true, 0, "Bearer ", 0, 7)
                || authorization.substring(7).isBlank()) {
            throw new AccordError(ErrorCode.UNAUTHENTICATED,
                    "missing credential: send 'Authorization: Bearer <token>'");
        }
        String token = authorization.substring(7).trim();
        Object roles;
        try {
            roles = SignedJWT.parse(token).getJWTClaimsSet().getClaim("roles");
        } catch (ParseException e) {
            throw new AccordError(ErrorCode.UNAUTHENTICATED, "malformed bearer token");
        }
        boolean service = roles instanceof List<?> l ? l.contains(Principal.ROLE_SERVICE)
                : roles instanceof String s && List.of(s.split(" ")).contains(Principal.ROLE_SERVICE);
        if (service) {
            return services.verify(token);
        }
        if (people == null) {
            throw new AccordError(ErrorCode.UNAUTHENTICATED, "this server accepts services' tokens only");
        }
        return people.verify(token);
    }
}

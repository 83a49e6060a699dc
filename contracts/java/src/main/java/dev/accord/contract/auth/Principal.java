// Hand-written: who a verified credential is, as accord.protocol.auth.Principal reads it.
package dev.accord.contract.auth;

import java.util.List;
import java.util.Set;

/**
 * A verified caller.
 *
 * @param subject {@code svc:NAME} for a service
 * @param roles the token's roles ({@code service} for a service)
 * @param app the tenant app of the credential ({@code accord} when the token names none)
 * @param grants what it may call: the trust table's grants, narrowed by the token's
 *     {@code scope} claim, never widened
 * @param tenants the tenant apps a service may act for ({@code *}: any), the table's
 */
public record Principal(
        String subject, List<String> roles, String app, Set<String> grants, Set<String> tenants) {

    public static final String ROLE_SERVICE = "service";

    public boolean isService() {
        return roles.contains(ROLE_SERVICE);
    }

    public boolean hasRole(String role) {
        return roles.contains(role);
    }

    public boolean hasGrant(String grant) {
        return grants.contains(grant);
    }

    /** True when a service may act for tenants of {@code tenantApp} (ENV-006). */
    public boolean mayActForApp(String tenantApp) {
        return tenants.contains("*") || tenants.contains(tenantApp);
    }
}

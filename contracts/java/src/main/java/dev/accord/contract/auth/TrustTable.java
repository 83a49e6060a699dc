// Hand-written: the verifier's trust table (docs/service-keys.md), the same YAML file Python reads.
package dev.accord.contract.auth;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.source.JWKSource;
import com.nimbusds.jose.jwk.source.JWKSourceBuilder;
import com.nimbusds.jose.proc.SecurityContext;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.text.ParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The services a verifier trusts: for each, where its public keys are (a JWKS URL or file),
 * its grants, the tenant apps it may act for and its issuer. Grants are the verifier's
 * decision: a token may ask for fewer with its {@code scope} claim, never for more.
 *
 * <pre>
 * services:
 *   orchestrator:
 *     jwks: https://orchestrator.internal/.well-known/jwks.json   # or a file; unset: KEYS_DIR/NAME/jwks.json
 *     grants: [orders.lookup, refunds.issue]
 *     tenants: ["*"]        # default [accord]
 *     issuer: accord        # default
 * </pre>
 */
public final class TrustTable {
    /** One trusted service. */
    public record Entry(
            String name, JWKSource<SecurityContext> keys, Set<String> grants, Set<String> tenants,
            String issuer) {}

    private final Map<String, Entry> entries;

    public TrustTable(Map<String, Entry> entries) {
        this.entries = Map.copyOf(entries);
    }

    public Entry get(String service) {
        return entries.get(service);
    }

    /** The table in {@code file}; a service without {@code jwks} is read from keysDir/NAME/jwks.json. */
    public static TrustTable load(Path file, Path keysDir) throws IOException {
        JsonNode root = new ObjectMapper(new YAMLFactory()).readTree(file.toFile());
        Map<String, Entry> entries = new LinkedHashMap<>();
        JsonNode services = root.path("services");
        for (var it = services.fields(); it.hasNext(); ) {
            var e = it.next();
            String name = e.getKey();
            JsonNode row = e.getValue();
            String where = row.path("jwks").asText("");
            JWKSource<SecurityContext> keys =
                    jwks(where.isEmpty() ? keysDir.resolve(name).resolve("jwks.json").toString() : where);
            Set<String> tenants = strings(row.path("tenants"));
            entries.put(name, new Entry(name, keys, strings(row.path("grants")),
                    tenants.isEmpty() ? Set.of("accord") : tenants, row.path("issuer").asText("accord")));
        }
        return new TrustTable(entries);
    }

    /** A key set at a URL (fetched and cached by nimbus) or in a file (read again on change). */
    public static JWKSource<SecurityContext> jwks(String where) throws IOException {
        if (where.startsWith("http://") || where.startsWith("https://")) {
            return JWKSourceBuilder.create(URI.create(where).toURL()).build();
        }
        return new FileJwks(Path.of(where));
    }

    private static Set<String> strings(JsonNode list) {
        Set<String> found = new LinkedHashSet<>();
        list.forEach(n -> found.add(n.asText()));
        return found;
    }

    /** A JWKS file, read again when it changes, so a key rotation needs no restart (as in Python). */
    static final class FileJwks implements JWKSource<SecurityContext> {
        private final Path path;
        private FileTime seen;
        private JWKSet keys = new JWKSet();

        FileJwks(Path path) {
            this.path = path;
        }

        @Override
        public synchronized List<com.nimbusds.jose.jwk.JWK> get(
                com.nimbusds.jose.jwk.JWKSelector selector, SecurityContext context) {
            try {
                FileTime now = Files.getLastModifiedTime(path);
                if (!now.equals(seen)) {
                    keys = JWKSet.parse(Files.readString(path));
                    seen = now;
                }
            } catch (IOException | ParseException e) {
                return new ArrayList<>();  // no readable keys: every token of it is refused
            }
            return selector.select(keys);
        }
    }
}

package dev.accord.tools.commerce;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.accord.contract.AccordError;
import dev.accord.contract.auth.Authenticator;
import dev.accord.contract.auth.PersonTokenVerifier;
import dev.accord.contract.auth.Principal;
import dev.accord.contract.auth.ServiceTokenSigner;
import dev.accord.contract.auth.ServiceTokenVerifier;
import dev.accord.contract.auth.TrustTable;
import dev.accord.contract.generated.Keys;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.transport.HttpServletStatelessServerTransport;
import io.modelcontextprotocol.spec.McpSchema;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.apache.catalina.Context;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;

/**
 * commerce-java: Accord's commerce MCP tool server (orders.lookup, customers.history,
 * orders.customer_history) on the MCP Java SDK's stateless streamable-HTTP servlet transport in
 * an embedded Tomcat. Settings are the Python services' environment variables (README.md).
 */
public final class Main {
    static final String SERVICE = "commerce";
    static final String MCP_PATH = "/mcp";
    static final String RESOURCE_METADATA = Keys.PROTECTED_RESOURCE_PATH;
    static final List<String> TOOLS = List.of("orders.lookup", "customers.history", "orders.customer_history");
    private static final ObjectMapper JSON = new ObjectMapper();

    private Main() {}

    public static void main(String[] argv) throws Exception {
        Map<String, String> env = System.getenv();
        String host = env.getOrDefault("HOST", "127.0.0.1");
        int port = Integer.parseInt(env.getOrDefault("PORT", "8710"));  // commerce's documented port
        Path keysDir = Path.of(env.getOrDefault("ACCORD_KEYS_DIR",
                Path.of(env.getOrDefault("ACCORD_DATA_DIR", ".accord"), "keys").toString()));
        String trustFile = env.get("ACCORD_SERVICE_TRUST");
        if (trustFile == null || trustFile.isBlank()) {
            throw new IllegalStateException("ACCORD_SERVICE_TRUST must name the trust table (docs/service-keys.md)");
        }
        String audience = env.getOrDefault("ACCORD_JWT_AUDIENCE", "accord");
        // commerce's token for refunds.list: the file's when ACCORD_SERVICE_TOKEN_FILE names one
        // (rotated by whoever writes it, read for every call), else signed by its own key ring.
        String tokenFile = env.get("ACCORD_SERVICE_TOKEN_FILE");
        ServiceTokenSigner signer = new ServiceTokenSigner(keysDir, SERVICE, audience, 3600);
        Supplier<String> token = tokenFile != null && !tokenFile.isBlank()
                ? () -> readToken(Path.of(tokenFile))
                : () -> signer.token(Set.of("refunds.list"));
        Set<String> tenantApps = Arrays.stream(env.getOrDefault("ACCORD_TENANT_APPS", "accord").split(","))
                .map(String::trim).filter(s -> !s.isEmpty()).collect(Collectors.toUnmodifiableSet());
        URI payments = URI.create(env.getOrDefault("ACCORD_PAYMENTS_URL", "http://127.0.0.1:8711") + MCP_PATH);

        Authenticator verifier = new Authenticator(
                new ServiceTokenVerifier(TrustTable.load(Path.of(trustFile), keysDir), audience),
                people(env, audience));
        List<ToolContract> contracts = new ArrayList<>();
        for (String name : TOOLS) {
            contracts.add(ToolContract.load(name));
        }
        CommerceTools tools = new CommerceTools(DemoData.load(Instant.now()),
                new Ledger(payments, token), new Access(tenantApps));

        HttpServletStatelessServerTransport transport = HttpServletStatelessServerTransport.builder()
                .jsonMapper(McpJsonDefaults.getMapper())
                .messageEndpoint(MCP_PATH)
                .maxRequestSize(1 << 20)  // 1 MiB, as Accord's Python servers
                .contextExtractor(request -> McpTransportContext.create(
                        Map.of(CommerceTools.PRINCIPAL, request.getAttribute(CommerceTools.PRINCIPAL))))
                .build();
        McpServer.sync(transport)
                .serverInfo("accord-commerce", "0.1.0")
                .instructions("Orders and customer history of the Accord demo shop. Money is in cents.")
                .capabilities(McpSchema.ServerCapabilities.builder().tools(false).build())
                .validateToolInputs(false)  // Access validates, answering INVALID_INPUT in _meta
                .tools(tools.specifications(contracts))
                .build();

        Tomcat tomcat = new Tomcat();
        tomcat.setBaseDir(Files.createTempDirectory("commerce-java").toString());
        Connector connector = tomcat.getConnector();
        connector.setPort(port);
        connector.setProperty("address", host);
        Context context = tomcat.addContext("", null);
        Tomcat.addServlet(context, "mcp", transport).setAsyncSupported(true);
        context.addServletMappingDecoded(MCP_PATH, "mcp");
        // Says who answers, as Python's services do: another service on the port is not healthy.
        Tomcat.addServlet(context, "health", json(req -> Map.of("status", "ok", "service", SERVICE)));
        context.addServletMappingDecoded(Keys.HEALTH_PATH, "health");
        context.addServletMappingDecoded(Keys.READY_PATH, "health");
        Tomcat.addServlet(context, "resource", json(Main::resourceMetadata));
        context.addServletMappingDecoded(RESOURCE_METADATA, "resource");
        context.addServletMappingDecoded(RESOURCE_METADATA + MCP_PATH, "resource");
        // Its public keys, as every Accord service publishes them (the key ring's JWKS file).
        Path jwks = keysDir.resolve(SERVICE).resolve("jwks.json");
        Tomcat.addServlet(context, "jwks", new HttpServlet() {
            @Override
            protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
                if (!Files.isRegularFile(jwks)) {
                    resp.sendError(404);
                    return;
                }
                resp.setContentType("application/json");
                resp.getWriter().write(Files.readString(jwks));
            }
        });
        context.addServletMappingDecoded(Keys.SERVICE_JWKS_PATH, "jwks");
        // The credential first (an unauthenticated caller is answered before anything else, as
        // by Python's tool servers), then the Host header (DNS-rebinding protection), both
        // before the body is read.
        addFilter(context, "credential", new CredentialGate(verifier));
        addFilter(context, "host", new HostCheck(allowedHosts(env.get("ACCORD_ALLOWED_HOSTS"), host)));
        tomcat.start();
        System.out.println("commerce-java serving http://" + host + ":" + port + MCP_PATH);
        tomcat.getServer().await();
    }

    /**
     * People's tokens, as Python's services read them: HS256 with ACCORD_JWT_SECRET (in
     * development, else the data directory's jwt-secret when it exists), RS256/ES256 with the
     * identity provider's ACCORD_JWKS (a URL or a file), issuers ACCORD_JWT_ISSUERS.
     */
    static PersonTokenVerifier people(Map<String, String> env, String audience) throws IOException {
        String secret = env.get("ACCORD_JWT_SECRET");
        Path devSecret = Path.of(env.getOrDefault("ACCORD_DATA_DIR", ".accord"), "jwt-secret");
        if ((secret == null || secret.isBlank()) && !"production".equals(env.get("ACCORD_MODE"))
                && Files.isRegularFile(devSecret)) {
            secret = Files.readString(devSecret).trim();
        }
        String jwks = env.get("ACCORD_JWKS");
        Set<String> issuers = Arrays.stream(env.getOrDefault("ACCORD_JWT_ISSUERS", "accord").split(","))
                .map(String::trim).filter(s -> !s.isEmpty()).collect(Collectors.toUnmodifiableSet());
        return new PersonTokenVerifier(secret, jwks == null || jwks.isBlank() ? null : TrustTable.jwks(jwks),
                issuers, audience);
    }

    private static String readToken(Path file) {
        try {
            return Files.readString(file).trim();
        } catch (IOException e) {
            throw new IllegalStateException("no token in " + file, e);
        }
    }

    private static void addFilter(Context context, String name, Filter filter) {
        FilterDef def = new FilterDef();
        def.setFilterName(name);
        def.setFilter(filter);
        def.setAsyncSupported("true");
        context.addFilterDef(def);
        FilterMap map = new FilterMap();
        map.setFilterName(name);
        map.addURLPatternDecoded(MCP_PATH);
        context.addFilterMap(map);
    }

    /**
     * The Host patterns of ACCORD_ALLOWED_HOSTS (comma-separated {@code host[:port]}, a port
     * {@code *} for any; a bare name matches any port), as Python's tool servers read it:
     * unset, loopback names on a loopback bind and no check on another bind; {@code *} alone,
     * no check. Null: no check.
     */
    static List<String> allowedHosts(String configured, String bind) {
        List<String> hosts;
        if (configured == null || configured.isBlank()) {
            if (!List.of("127.0.0.1", "localhost", "::1").contains(bind)) {
                return null;  // the name clients use (a service name, a proxy) is not knowable here
            }
            hosts = List.of("127.0.0.1:*", "localhost:*", "[::1]:*");
        } else {
            hosts = Arrays.stream(configured.split(",")).map(String::trim).filter(h -> !h.isEmpty()).toList();
        }
        if (hosts.contains("*")) {
            return null;
        }
        List<String> patterns = new ArrayList<>();
        for (String h : hosts) {
            patterns.add(h);
            if (!h.contains(":")) {
                patterns.add(h + ":*");
            }
        }
        return patterns;
    }

    /** 421 for a Host header no pattern admits (the MCP SDKs' DNS-rebinding protection). */
    static final class HostCheck implements Filter {
        private final List<String> patterns;

        HostCheck(List<String> patterns) {
            this.patterns = patterns;
        }

        @Override
        public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
                throws IOException, ServletException {
            String given = ((HttpServletRequest) request).getHeader("Host");
            if (patterns != null && (given == null || patterns.stream().noneMatch(p -> matches(p, given)))) {
                HttpServletResponse resp = (HttpServletResponse) response;
                resp.setStatus(421);
                resp.setContentType("text/plain");
                resp.getWriter().write("Invalid Host header");
                return;
            }
            chain.doFilter(request, response);
        }

        static boolean matches(String pattern, String host) {
            if (pattern.endsWith(":*")) {
                String name = pattern.substring(0, pattern.length() - 2);
                return host.equals(name) || host.startsWith(name + ":");
            }
            return pattern.equals(host);
        }
    }

    /** The origin the client used (the document is public: reflecting Host discloses nothing). */
    static String origin(HttpServletRequest req) {
        String hostHeader = req.getHeader("Host");
        return req.getScheme() + "://" + (hostHeader != null ? hostHeader : req.getServerName() + ":" + req.getServerPort());
    }

    /** RFC 9728 protected-resource metadata, as the Python tool servers serve it (TOOL-010). */
    static Map<String, Object> resourceMetadata(HttpServletRequest req) {
        String origin = origin(req);
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("resource", origin + MCP_PATH);
        doc.put("authorization_servers", List.of(origin + "/"));
        doc.put("scopes_supported", TOOLS.stream().sorted().toList());
        doc.put("bearer_methods_supported", List.of("header"));
        doc.put("resource_name", "accord-commerce");
        return doc;
    }

    interface Body {
        Map<String, Object> of(HttpServletRequest req);
    }

    private static HttpServlet json(Body body) {
        return new HttpServlet() {
            @Override
            protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
                resp.setContentType("application/json");
                resp.getWriter().write(JSON.writeValueAsString(body.of(req)));
            }
        };
    }

    /**
     * Every MCP request carries a verified credential, checked before its body is read: none or
     * a bad one is 401 UNAUTHENTICATED naming the protected-resource metadata (TOOL-010).
     */
    static final class CredentialGate implements Filter {
        private final Authenticator verifier;

        CredentialGate(Authenticator verifier) {
            this.verifier = verifier;
        }

        @Override
        public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
                throws IOException, ServletException {
            HttpServletRequest req = (HttpServletRequest) request;
            HttpServletResponse resp = (HttpServletResponse) response;
            String authorization = req.getHeader("Authorization");
            Principal principal;
            try {
                principal = verifier.authenticate(authorization);
            } catch (AccordError e) {
                String challenge = "Bearer realm=\"accord\", resource_metadata=\"" + origin(req)
                        + RESOURCE_METADATA + MCP_PATH + "\"";
                if (authorization != null) {  // RFC 6750: a presented credential that failed
                    challenge += ", error=\"invalid_token\", error_description=\"" + e.getMessage() + "\"";
                }
                resp.setStatus(401);
                resp.setHeader("WWW-Authenticate", challenge);
                resp.setContentType("application/json");
                resp.getWriter().write(JSON.writeValueAsString(Map.of("error", e.toDict())));
                return;
            }
            req.setAttribute(CommerceTools.PRINCIPAL, principal);
            chain.doFilter(request, response);
        }
    }
}

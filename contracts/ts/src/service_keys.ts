// Service tokens as every Accord service signs and verifies them (docs/service-keys.md): each
// service signs its own tokens with its own ES256 key (a `kid` in the header) and publishes its
// public keys (JWKS, served at /.well-known/jwks.json); a verifier accepts `svc:NAME` only
// under NAME's keys, from its trust table. Built on jose; the claims are Python's
// (accord.protocol.auth.tokens.token_claims): iss and aud `accord`, sub, roles, app, jti, iat,
// exp, and `scope` when the token asks for fewer grants than the verifier's table gives.
import { randomUUID } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import {
  type JWK, type JWTVerifyGetKey, SignJWT, calculateJwkThumbprint, createLocalJWKSet,
  createRemoteJWKSet, decodeJwt, exportJWK, generateKeyPair, importJWK, jwtVerify,
} from "jose";
import { AccordError } from "./error.js";

export const SERVICE_ALGORITHM = "ES256";
export const TOKEN_ISSUER = "accord";
export const TOKEN_AUDIENCE = "accord";
export const SERVICE_ROLE = "service";
export const DEFAULT_APP = "accord";
export const JWKS_PATH = "/.well-known/jwks.json";

/** Who called, as the verified token says. */
export interface Principal {
  readonly subject: string;
  readonly roles: readonly string[];
  readonly app: string;
  /** The grants the token asks for (`scope`), or undefined when it asks for all it holds: a
   * token may narrow its service's grants, never widen them. */
  readonly scopes: readonly string[] | undefined;
  /** What it may call: its trust entry's grants, narrowed by `scopes`; undefined when the
   * table gives its services every grant (a table of names and key sets only). */
  readonly grants: readonly string[] | undefined;
  /** The tenant apps it may act for (its trust entry's; `*` is any). */
  readonly tenants: readonly string[];
}

/** One trusted service: its key set and, from a trust file, its grants and tenant apps. */
export interface TrustedService {
  readonly keys: JWTVerifyGetKey;
  readonly grants?: readonly string[];
  readonly tenants?: readonly string[];
  readonly issuer?: string;
}

export type TrustTable = Map<string, TrustedService>;

/** Whether the principal may call what `grant` names (a service: its grants; anyone else is
 * not judged here). */
export function holds(principal: Principal, grant: string): boolean {
  return principal.grants === undefined || principal.grants.includes(grant);
}

/** Whether the principal may act for tenant app `app`. */
export function actsFor(principal: Principal, app: string): boolean {
  return principal.tenants.includes("*") || principal.tenants.includes(app);
}

/** A service's signing key: made on first use in `file` (a private JWK, mode 0600 in a 0700
 * folder), refused when others may read it, as Python refuses a readable key ring. */
export class ServiceKey {
  private constructor(
    readonly service: string,
    private readonly privateKey: Awaited<ReturnType<typeof importJWK>>,
    readonly publicJwk: JWK,
  ) {}

  static async load(service: string, file: string): Promise<ServiceKey> {
    let jwk: JWK;
    if (existsSync(file)) {
      if ((statSync(file).mode & 0o077) !== 0) {
        throw new Error(`${file} is readable by others: chmod 600 it (docs/service-keys.md)`);
      }
      jwk = JSON.parse(readFileSync(file, "utf8")) as JWK;
    } else {
      const pair = await generateKeyPair(SERVICE_ALGORITHM, { extractable: true });
      jwk = await exportJWK(pair.privateKey);
      // The key's thumbprint, behind a prefix: a kid never starts with '-' (a command line
      // would read it as an option).
      jwk.kid = `es256-${(await calculateJwkThumbprint(jwk)).slice(0, 22)}`;
      jwk.alg = SERVICE_ALGORITHM;
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
      writeFileSync(file, JSON.stringify(jwk), { mode: 0o600, flag: "wx" });
      chmodSync(file, 0o600);
    }
    if (typeof jwk.kid !== "string" || jwk.d === undefined) {
      throw new Error(`${file} holds no private key with a kid`);
    }
    const { d: _private, ...publicJwk } = jwk;
    void _private;
    const key = await importJWK(jwk, SERVICE_ALGORITHM);
    return new ServiceKey(service, key, { ...publicJwk, use: "sig" });
  }

  get kid(): string {
    return String(this.publicJwk.kid);
  }

  /** What this service publishes at /.well-known/jwks.json. */
  jwks(): { keys: JWK[] } {
    return { keys: [this.publicJwk] };
  }

  /** A token of `svc:SERVICE`, asking for `scopes` only (none: all its grants). */
  async token(options: { scopes?: readonly string[]; ttlS?: number; app?: string } = {}): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const claims: Record<string, unknown> = { roles: [SERVICE_ROLE], app: options.app ?? DEFAULT_APP };
    const scopes = [...new Set(options.scopes ?? [])].sort();
    if (scopes.length > 0) claims["scope"] = scopes.join(" ");
    return new SignJWT(claims)
      .setProtectedHeader({ alg: SERVICE_ALGORITHM, kid: this.kid })
      .setSubject(`svc:${this.service}`)
      .setIssuer(TOKEN_ISSUER)
      .setAudience(TOKEN_AUDIENCE)
      .setIssuedAt(now)
      .setExpirationTime(now + (options.ttlS ?? 300))
      .setJti(randomUUID().replaceAll("-", ""))
      .sign(this.privateKey);
  }
}

/** A bearer token that signs itself again before it runs out (a minute of margin). */
export class ServiceCredential {
  private current: { token: string; expires: number } | undefined;

  constructor(
    private readonly key: ServiceKey,
    private readonly scopes: readonly string[] = [],
    private readonly ttlS = 300,
  ) {}

  async bearer(): Promise<string> {
    const now = Date.now() / 1000;
    if (this.current === undefined || this.current.expires - now < 60) {
      const token = await this.key.token({ scopes: this.scopes, ttlS: this.ttlS });
      this.current = { token, expires: now + this.ttlS };
    }
    return this.current.token;
  }
}

function keySet(where: string): JWTVerifyGetKey {
  if (/^https?:\/\//.test(where)) return createRemoteJWKSet(new URL(where));
  // A file is read on each verification, so a rotation needs no restart (as Python reads it).
  return async (header, token) =>
    createLocalJWKSet(JSON.parse(readFileSync(where, "utf8")))(header, token);
}

/** A trust table from `NAME=JWKS` entries, comma-separated; each JWKS a URL or a file. Its
 * services hold every grant, for app `accord`: list only services that may call everything. */
export function trustTable(spec: string): TrustTable {
  const table: TrustTable = new Map();
  for (const entry of spec.split(",").map((e) => e.trim()).filter(Boolean)) {
    const at = entry.indexOf("=");
    if (at <= 0) throw new Error(`trust entry '${entry}' is not NAME=JWKS`);
    table.set(entry.slice(0, at), { keys: keySet(entry.slice(at + 1)) });
  }
  return table;
}

/** A trust table file in the format every Accord service reads (`ACCORD_SERVICE_TRUST`,
 * docs/service-keys.md), written as JSON (which is YAML too, so one file serves Python and
 * TypeScript): `{"services": {NAME: {"jwks": URL or file, "grants": [...], "tenants": [...],
 * "issuer": "accord"}}}`. Here `jwks` is required; grants default to none, tenants to
 * [accord]. */
export function readTrustFile(file: string): TrustTable {
  const document = JSON.parse(readFileSync(file, "utf8")) as { services?: Record<string, unknown> };
  const table: TrustTable = new Map();
  for (const [name, raw] of Object.entries(document.services ?? {})) {
    const entry = raw as { jwks?: unknown; grants?: unknown; tenants?: unknown; issuer?: unknown };
    if (typeof entry.jwks !== "string") throw new Error(`${file}: ${name} names no jwks`);
    const strings = (value: unknown, fallback: string[]): string[] =>
      Array.isArray(value) ? value.map(String) : fallback;
    table.set(name, {
      keys: keySet(entry.jwks),
      grants: strings(entry.grants, []),
      tenants: strings(entry.tenants, [DEFAULT_APP]),
      issuer: typeof entry.issuer === "string" ? entry.issuer : TOKEN_ISSUER,
    });
  }
  return table;
}

const BEARER = /^Bearer\s+(\S+)$/i;

/** Verifies the bearer tokens of trusted services (people's tokens are not accepted here). */
export class TokenVerifier {
  constructor(
    private readonly trust: TrustTable,
    private readonly audience = TOKEN_AUDIENCE,
  ) {}

  /** The caller behind an Authorization header: UNAUTHENTICATED when there is no valid token. */
  async principal(authorization: string | undefined): Promise<Principal> {
    const found = BEARER.exec(authorization ?? "");
    if (found === null || found[1] === undefined) {
      throw new AccordError(
        "UNAUTHENTICATED", "missing credential: send 'Authorization: Bearer <token>'",
      );
    }
    const token = found[1];
    let subject: unknown;
    try {
      subject = decodeJwt(token).sub;
    } catch {
      throw new AccordError("UNAUTHENTICATED", "the bearer token is not a JWT");
    }
    const service = typeof subject === "string" && subject.startsWith("svc:")
      ? this.trust.get(subject.slice(4)) : undefined;
    if (service === undefined) {
      throw new AccordError("UNAUTHENTICATED", "the token's subject is not a trusted service");
    }
    try {
      const { payload } = await jwtVerify(token, service.keys, {
        issuer: service.issuer ?? TOKEN_ISSUER, audience: this.audience,
        algorithms: [SERVICE_ALGORITHM],
        requiredClaims: ["exp", "iat", "jti", "sub"],
      });
      const roles = Array.isArray(payload["roles"]) ? payload["roles"].map(String) : [];
      if (!roles.includes(SERVICE_ROLE)) throw new Error("not a service token");
      const app = typeof payload["app"] === "string" ? payload["app"] : DEFAULT_APP;
      const scope = payload["scope"];
      const scopes = typeof scope === "string" ? scope.split(" ").filter(Boolean) : undefined;
      // A token may ask for fewer grants than the table gives, never for more.
      const grants = service.grants === undefined
        ? scopes
        : service.grants.filter((g) => scopes === undefined || scopes.includes(g));
      const tenants = service.tenants ?? [DEFAULT_APP];
      return { subject: String(payload.sub), roles, app, scopes, grants, tenants };
    } catch {
      throw new AccordError("UNAUTHENTICATED", "the bearer token is invalid or expired");
    }
  }
}

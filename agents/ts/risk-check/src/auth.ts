// Bearer tokens, verified with jose against the keys of the services this agent trusts: a
// token `svc:NAME` must be signed by a key of NAME's JWKS (docs/service-keys.md). The trust
// table is RISK_TRUST: `NAME=JWKS` entries, comma-separated, each JWKS a URL or a file path.
import { readFileSync } from "node:fs";
import type { Request } from "express";
import {
  createLocalJWKSet, createRemoteJWKSet, decodeJwt, jwtVerify, type JWTVerifyGetKey,
} from "jose";
import { AccordError } from "@accord/contract";

export interface Principal {
  readonly subject: string;
  readonly roles: readonly string[];
  readonly app: string;
  /**
   * The grants the token asks for (its OAuth `scope` claim, space-separated), or undefined
   * when it asks for all its service holds: as in Python, a token may narrow the trust
   * table's grants, never widen them, and RISK_TRUST lists only services granted refund.risk.
   */
  readonly scopes: readonly string[] | undefined;
}

const BEARER = /^Bearer\s+(\S+)$/i;

function keySet(where: string): JWTVerifyGetKey {
  if (/^https?:\/\//.test(where)) return createRemoteJWKSet(new URL(where));
  // A file is read on each verification, so a rotation needs no restart (as Python reads it).
  return async (header, token) =>
    createLocalJWKSet(JSON.parse(readFileSync(where, "utf8")))(header, token);
}

export function trustTable(spec: string): Map<string, JWTVerifyGetKey> {
  const table = new Map<string, JWTVerifyGetKey>();
  for (const entry of spec.split(",").map((e) => e.trim()).filter(Boolean)) {
    const at = entry.indexOf("=");
    if (at <= 0) throw new Error(`RISK_TRUST entry '${entry}' is not NAME=JWKS`);
    table.set(entry.slice(0, at), keySet(entry.slice(at + 1)));
  }
  return table;
}

export class Verifier {
  constructor(
    private readonly trust: Map<string, JWTVerifyGetKey>,
    private readonly issuer = "accord",
    private readonly audience = "accord",
  ) {}

  /** The caller of a request; UNAUTHENTICATED when it sent no valid token. */
  async principal(req: Request): Promise<Principal> {
    const found = BEARER.exec(req.header("authorization") ?? "");
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
      const { payload } = await jwtVerify(token, service, {
        issuer: this.issuer, audience: this.audience, algorithms: ["ES256"],
        requiredClaims: ["exp", "iat", "jti", "sub"],
      });
      const roles = Array.isArray(payload["roles"]) ? payload["roles"].map(String) : [];
      const app = typeof payload["app"] === "string" ? payload["app"] : "accord";
      const scope = payload["scope"];
      const scopes = typeof scope === "string" ? scope.split(" ").filter(Boolean) : undefined;
      return { subject: String(payload.sub), roles, app, scopes };
    } catch {
      throw new AccordError("UNAUTHENTICATED", "the bearer token is invalid or expired");
    }
  }
}

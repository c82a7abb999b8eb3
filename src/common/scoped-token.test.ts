import { describe, expect, it } from "bun:test";
import { mintScopedToken, scopedTokenVerifier } from "./scoped-token";

const SECRET = "router-secret";

describe("scoped tokens", () => {
  it("verify with the secret that signed them and carry their subject, scopes and expiry", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    const t = mintScopedToken(SECRET, { sub: "job:42", ttlSeconds: 600, now });
    expect(t).not.toContain(SECRET);
    const v = scopedTokenVerifier([SECRET]).verify(t, now + 1000);
    expect(v).toEqual({
      ok: true,
      claims: { sub: "job:42", scope: ["feed:read", "signal:read", "marker:write", "vault:read"], iat: now / 1000, exp: now / 1000 + 600 },
    });
  });

  it("open only the hooks' routes and reading the vault", () => {
    const check = scopedTokenVerifier([SECRET]).check;
    const t = mintScopedToken(SECRET, { sub: "job:1", ttlSeconds: 60 });
    const open = [
      ["GET", "/feed"],
      ["HEAD", "/feed"],
      ["GET", "/signal"],
      ["POST", "/marker"],
      ["POST", "/search"],
      ["GET", "/notes"],
      ["GET", "/notes/raw/a.md"],
      ["GET", "/notes/raw/a.md/context"],
      ["POST", "/notes/batch"],
    ];
    for (const [m, p] of open) expect(check(t, m!, p!).ok).toBe(true);
    const shut = [
      ["POST", "/ingest"],
      ["POST", "/tick"],
      ["POST", "/feed"],
      ["GET", "/marker"],
      ["GET", "/feed/x"],
      ["POST", "/brief"],
      ["POST", "/dispatch"],
      ["GET", "/notesx"],
      ["POST", "/notes"],
      ["GET", "/health/deep"],
    ];
    for (const [m, p] of shut) {
      expect(check(t, m!, p!)).toMatchObject({ ok: false, reason: "out_of_scope" });
    }
    const markersOnly = mintScopedToken(SECRET, { sub: "job:1", ttlSeconds: 60, scope: ["marker:write"] });
    expect(check(markersOnly, "GET", "/feed")).toMatchObject({ ok: false, reason: "out_of_scope" });
  });

  it("are refused once expired", () => {
    const now = Date.now();
    const t = mintScopedToken(SECRET, { sub: "job:1", ttlSeconds: 30, now });
    const v = scopedTokenVerifier([SECRET]);
    expect(v.check(t, "GET", "/feed", now + 29_000).ok).toBe(true);
    expect(v.check(t, "GET", "/feed", now + 31_000)).toMatchObject({ ok: false, reason: "expired" });
  });

  it("are refused when signed with another secret, tampered with or malformed", () => {
    const v = scopedTokenVerifier([SECRET]);
    const t = mintScopedToken(SECRET, { sub: "job:1", ttlSeconds: 60 });
    expect(v.verify(mintScopedToken("another", { sub: "job:1", ttlSeconds: 60 }))).toEqual({ ok: false, reason: "invalid" });
    const [prefix, payload, mac] = t.split(".");
    const claims = JSON.parse(Buffer.from(payload!, "base64url").toString());
    const widened = Buffer.from(JSON.stringify({ ...claims, exp: claims.exp + 86_400 })).toString("base64url");
    expect(v.verify(`${prefix}.${widened}.${mac}`)).toEqual({ ok: false, reason: "invalid" });
    for (const bad of ["bsk1.", "bsk1..", `bsk1.${payload}`, `bsk1.${payload}.AAAA`, "router-secret", ""]) expect(v.verify(bad).ok).toBe(false);
    expect(scopedTokenVerifier([]).verify(t).ok).toBe(false);
  });

  it("keep verifying after a rotation while the old secret is still listed", () => {
    const t = mintScopedToken("old", { sub: "job:1", ttlSeconds: 60 });
    expect(scopedTokenVerifier(["new", "old"]).verify(t).ok).toBe(true);
    expect(scopedTokenVerifier(["new"]).verify(t).ok).toBe(false);
  });
});

import { afterEach, beforeEach, describe, expect, it } from "bun:test";
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Server } from "bun";
import { jwtVerify } from "jose";
import { type CredentialsConfig, clearTokenCache, gitAuthFor, resolveGitCredentials } from "./credentials";
import { parseRepoUrl } from "./url";

const none = undefined as unknown as string;
const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
// GitHub hands out PKCS#1 ("BEGIN RSA PRIVATE KEY") files.
const PEM = privateKey.export({ type: "pkcs1", format: "pem" }).toString();

/** A fixture GitHub API: POST /app/installations/{id}/access_tokens with an RS256 app JWT. */
let api: Server<undefined>;
let calls: Array<{ path: string; iss?: string; ok: boolean }>;
beforeEach(() => {
  calls = [];
  clearTokenCache();
  api = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const path = new URL(req.url).pathname;
      const jwt = req.headers.get("authorization")?.replace(/^Bearer /, "") ?? "";
      try {
        const { payload, protectedHeader } = await jwtVerify(jwt, publicKey, { algorithms: ["RS256"] });
        calls.push({ path, iss: payload.iss, ok: protectedHeader.alg === "RS256" });
      } catch {
        calls.push({ path, ok: false });
        return Response.json({ message: "A JSON web token could not be decoded" }, { status: 401 });
      }
      if (path !== "/app/installations/42/access_tokens" || req.method !== "POST") return Response.json({ message: "Not Found" }, { status: 404 });
      return Response.json({ token: "ghs_installation_token", expires_at: new Date(Date.now() + 3600_000).toISOString() }, { status: 201 });
    },
  });
});
afterEach(() => api.stop(true));

const config = (c: Partial<CredentialsConfig>): CredentialsConfig => ({
  githostToken: none,
  githostApiUrl: `http://127.0.0.1:${api.port}`,
  githostUrl: none,
  githostAppId: none,
  githostAppInstallationId: none,
  githostAppPrivateKeyPath: none,
  githostAppPrivateKey: none,
  githostAppPrivateKeyBase64: none,
  ...c,
});

describe("git host credentials", () => {
  it("exchanges an app JWT (PEM from a path) for an installation token, and caches it", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "app-key-")), "app.pem");
    writeFileSync(path, PEM);
    const c = config({ githostAppId: "1234", githostAppInstallationId: "42", githostAppPrivateKeyPath: path, githostToken: "ghp_ignored" });
    expect(await resolveGitCredentials(c)).toMatchObject({ token: "ghs_installation_token", source: "app", hostname: "127.0.0.1" });
    expect(calls).toEqual([{ path: "/app/installations/42/access_tokens", iss: "1234", ok: true }]);
    await resolveGitCredentials(c);
    expect(calls).toHaveLength(1);
  });

  it("takes the PEM as raw text (with escaped newlines) or base64", async () => {
    const raw = config({ githostAppId: "1", githostAppInstallationId: "42", githostAppPrivateKey: PEM.replace(/\n/g, "\\n") });
    expect((await resolveGitCredentials(raw))?.token).toBe("ghs_installation_token");
    clearTokenCache();
    const b64 = config({ githostAppId: "1", githostAppInstallationId: "42", githostAppPrivateKeyBase64: Buffer.from(PEM).toString("base64") });
    expect((await resolveGitCredentials(b64))?.token).toBe("ghs_installation_token");
  });

  it("says what is missing in a partial app identity, and what the API answered", async () => {
    await expect(resolveGitCredentials(config({ githostAppId: "1", githostAppPrivateKey: PEM }))).rejects.toThrow(/GITHOST_APP_INSTALLATION_ID/);
    await expect(resolveGitCredentials(config({ githostAppId: "1", githostAppInstallationId: "42" }))).rejects.toThrow(/private key/);
    await expect(resolveGitCredentials(config({ githostAppId: "1", githostAppInstallationId: "7", githostAppPrivateKey: PEM }))).rejects.toThrow(/404/);
  });

  it("uses GITHOST_TOKEN without an app, and nothing without either", async () => {
    expect(await resolveGitCredentials(config({ githostToken: "ghp_pat", githostApiUrl: "https://api.github.com" }))).toEqual({
      token: "ghp_pat",
      source: "pat",
      hostname: "github.com",
      origin: "https://github.com/",
    });
    expect(await resolveGitCredentials(config({}))).toBeUndefined();
  });

  it("sends the token only to the git host, as a header scoped to the repository's origin", () => {
    const creds = { token: "ghp_pat", source: "pat" as const, hostname: "github.com", origin: "https://github.com/" };
    expect(gitAuthFor(parseRepoUrl("https://github.com/org/repo.git"), creds)).toEqual({
      origin: "https://github.com/",
      header: `Authorization: Basic ${Buffer.from("x-access-token:ghp_pat").toString("base64")}`,
    });
    expect(gitAuthFor(parseRepoUrl("https://evil.example/org/repo.git"), creds)).toBeUndefined();
    expect(gitAuthFor(parseRepoUrl("git@github.com:org/repo.git"), creds)).toBeUndefined();
    // Plain http and another port of the same host get nothing.
    expect(gitAuthFor(parseRepoUrl("http://github.com/org/repo.git"), creds)).toBeUndefined();
    expect(gitAuthFor(parseRepoUrl("https://github.com:8443/org/repo.git"), creds)).toBeUndefined();
    expect(gitAuthFor(parseRepoUrl("https://github.com/org/repo.git"), undefined)).toBeUndefined();
  });
});

// Git credentials go only where they belong (issue 14, part 2), against the real process and
// real git over loopback HTTP: GITHOST_TOKEN only to the configured git host's scheme, host and
// port, in jobs and in the companion sync; repo_url refuses local paths unless allowed, and a
// host that starts with '-'.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { type DumbGitServer, startDumbGitServer } from "./fixtures/dumb-git-server";
import { gitSync, makeRemote, type Remote } from "./fixtures/git-remote";
import { finished, type Orchestrator, startOrchestrator } from "./support/orchestrator-process";

type Json = Record<string, any>;
const TOKEN = "ghp_scopedTokenForTests";
const HEADER = `Basic ${Buffer.from(`x-access-token:${TOKEN}`).toString("base64")}`;

let remote: Remote;
let host: DumbGitServer; // the configured git host
let other: DumbGitServer; // the same address, another port
beforeAll(() => {
  remote = makeRemote();
  gitSync(["update-server-info"], remote.bare);
  host = startDumbGitServer(remote.bare, { requireAuth: HEADER });
  other = startDumbGitServer(remote.bare);
});
afterAll(() => {
  host.stop();
  other.stop();
});

describe("GITHOST_TOKEN scoped to the git host's origin", () => {
  let o: Orchestrator;
  beforeAll(async () => {
    // A loopback git host on plain http is the one http origin the token may go to (tests).
    o = await startOrchestrator({ env: { GITHOST_TOKEN: TOKEN, GITHOST_API_URL: new URL(host.url).origin, SERVICE_HOOKS_URL: other.url } });
  });
  afterAll(() => o.stop());

  it("sends the token to the configured host and port", async () => {
    const job = await o.submit({ task: "look around", repo_url: host.url });
    const done = await o.until(job.id, finished, 30_000);
    expect(done.status).toBe("succeeded");
    expect(host.authorizations).toContain(HEADER);
  });

  it("does not send it to another port of the same host", async () => {
    const job = await o.submit({ task: "look around", repo_url: other.url });
    const done = await o.until(job.id, finished, 30_000);
    expect(done.status).toBe("succeeded");
    expect(other.authorizations.length).toBeGreaterThan(0);
    expect(other.authorizations.filter((a) => a !== null)).toEqual([]);
  });

  it("does not send it to a companion repository on another origin (POST /admin/sync)", async () => {
    const before = other.authorizations.length;
    const res = await o.call("/admin/sync?target=agentihooks", { method: "POST" });
    expect(res.status).toBe(200);
    const result = ((await res.json()) as Json).results[0];
    expect(result.status).toBe("synced");
    expect(other.authorizations.length).toBeGreaterThan(before);
    expect(other.authorizations.filter((a) => a !== null)).toEqual([]);
  });
});

describe("GITHOST_TOKEN for an https git host", () => {
  let o: Orchestrator;
  beforeAll(async () => {
    // The git host is https on this address and port: the plain-http URL of the same host:port gets nothing.
    o = await startOrchestrator({
      env: { GITHOST_TOKEN: TOKEN, GITHOST_API_URL: new URL(other.url).origin.replace("http:", "https:"), SERVICE_HUB_URL: "", SERVICE_HOOKS_URL: other.url },
    });
  });
  afterAll(() => o.stop());

  it("never sends it over plain http, in a job or a companion sync", async () => {
    const before = other.authorizations.length;
    const job = await o.submit({ task: "look around", repo_url: other.url });
    expect((await o.until(job.id, finished, 30_000)).status).toBe("succeeded");
    expect((await o.call("/admin/sync?target=agentihooks", { method: "POST" })).status).toBe(200);
    const seen = other.authorizations.slice(before);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.filter((a) => a !== null)).toEqual([]);
  });
});

describe("repo_url", () => {
  let o: Orchestrator;
  beforeAll(async () => {
    o = await startOrchestrator({ env: { SERVICE_ALLOW_LOCAL_REPOS: "0" } });
  });
  afterAll(() => o.stop());

  for (const [i, url] of [() => remote.url, () => remote.bare].entries()) {
    it(`refuses a local repository (${["file:// URL", "path"][i]}) unless SERVICE_ALLOW_LOCAL_REPOS=1`, async () => {
      const res = await o.call("/jobs", { method: "POST", json: { task: "x", repo_url: url() } });
      expect(res.status).toBe(400);
      const body = (await res.json()) as Json;
      expect(body.error.code).toBe("invalid_repo_url");
      expect(body.error.message).toContain("SERVICE_ALLOW_LOCAL_REPOS");
    });
  }

  it("refuses a host that starts with '-' before git sees it", async () => {
    for (const repo_url of ["ssh://-oProxyCommand=touch%20/tmp/pwned/repo", "git@-oProxy:org/repo.git"]) {
      const res = await o.call("/jobs", { method: "POST", json: { task: "x", repo_url } });
      expect(res.status).toBe(400);
    }
    expect(((await (await o.call("/jobs")).json()) as Json).jobs).toEqual([]);
  });

  it("accepts https, ssh and git URLs", async () => {
    for (const repo_url of ["https://example.invalid/org/repo.git", "git@example.invalid:org/repo.git", "git://example.invalid/org/repo.git"]) {
      const res = await o.call("/jobs", { method: "POST", json: { task: "x", repo_url } });
      expect(res.status).toBe(202);
    }
  });
});

import { describe, expect, it } from "bun:test";
import { httpErrorOf } from "../../common/http-error";
import { redact } from "./redact";
import { InvalidRepoUrlError, parseRepoUrl, repoHash } from "./url";

describe("parseRepoUrl", () => {
  it.each([
    ["https://github.com/org/repo.git", "https", "https://github.com/org/repo"],
    ["https://GitHub.com/org/repo/", "https", "https://github.com/org/repo"],
    ["http://127.0.0.1:8080/org/repo", "http", "http://127.0.0.1:8080/org/repo"],
    ["git@github.com:org/repo.git", "ssh", "ssh://github.com/org/repo"],
    ["ssh://git@github.com/org/repo.git", "ssh", "ssh://github.com/org/repo"],
    ["file:///srv/git/repo.git", "file", "file:///srv/git/repo.git"],
    ["/srv/git/repo.git/", "file", "file:///srv/git/repo.git"],
    ["git://git.example.org/org/repo.git", "git", "git://git.example.org/org/repo"],
  ])("accepts %s", (url, kind, key) => {
    expect(parseRepoUrl(url)).toMatchObject({ kind, key });
  });

  it("gives one cache key (16 hex) to the spellings of one repository", () => {
    const a = repoHash(parseRepoUrl("https://github.com/org/repo.git"));
    expect(a).toMatch(/^[0-9a-f]{16}$/);
    expect(repoHash(parseRepoUrl("https://GITHUB.com/org/repo"))).toBe(a);
    expect(repoHash(parseRepoUrl("https://github.com/org/other"))).not.toBe(a);
    expect(repoHash(parseRepoUrl("git@github.com:org/repo.git"))).toBe(repoHash(parseRepoUrl("ssh://git@github.com/org/repo")));
  });

  it.each([
    ["", "empty"],
    ["   ", "empty"],
    ["relative/path", "not a URL"],
    ["--upload-pack=touch", "'-'"],
    ["ext::sh -c touch% /tmp/pwned", "whitespace"],
    ["ssh://-oProxyCommand=touch%20pwned/repo", "starting with '-'"],
    ["git@-oProxy:org/repo", "starting with '-'"],
    ["git://-x/org/repo", "starting with '-'"],
    ["ftp://host/repo", "scheme ftp:"],
    ["https://github.com", "no repository path"],
    ["https://x-access-token:ghp_secret@github.com/org/repo", "credentials"],
    ["https://ghp_secret@github.com/org/repo", "credentials"],
    ["https://github.com/org/repo?x=1", "query"],
    ["file://host/srv/repo", "file:///"],
  ])("refuses %p with a 400 (%s)", (url, why) => {
    let err: unknown;
    try {
      parseRepoUrl(url);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InvalidRepoUrlError);
    expect(httpErrorOf(err)).toMatchObject({ status: 400, code: "invalid_repo_url" });
    expect((err as Error).message).toContain(why);
    expect((err as Error).message).not.toContain("ghp_secret");
  });
});

describe("redact", () => {
  it("hides secrets in plain, basic-auth and URL forms, and credentials in URLs", () => {
    const token = "ghp_abc123secret";
    const basic = Buffer.from(`x-access-token:${token}`).toString("base64");
    const text = `fatal: auth ${token} failed; header Authorization: Basic ${basic}; url https://user:${encodeURIComponent("p@ss")}@host/x`;
    const out = redact(text, [token, undefined, "ab"]);
    expect(out).not.toContain(token);
    expect(out).not.toContain(basic);
    expect(out).toContain("https://***@host/x");
  });
});

import { describe, expect, it } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { httpErrorOf } from "../../common/http-error";
import { hooksPackageDir, loadProfiles, type ProfilesConfig } from "./load";
import { autoProfileName, UnknownProfileError } from "./select";

const setup = (extra: Partial<ProfilesConfig> = {}) => {
  const home = mkdtempSync(join(tmpdir(), "profiles-"));
  const config: ProfilesConfig = {
    stateDir: join(home, ".service"),
    hooksPath: "",
    hooksUrl: "",
    cloneRoot: "",
    sharedFsRoot: undefined as unknown as string,
    ...extra,
  };
  const write = (root: string, name: string, yaml: string, file = "profile.yml") => {
    mkdirSync(join(root, name), { recursive: true });
    writeFileSync(join(root, name, file), yaml);
  };
  return { home, config, user: join(config.stateDir, "profiles"), write };
};

describe("profiles", () => {
  it("bundles code (sonnet, 80 turns, auto_pr) and review (haiku, 20 turns, no PR)", async () => {
    const { profiles, errors } = await loadProfiles(setup().config);
    expect(errors).toEqual([]);
    expect(profiles.map((p) => [p.name, p.model, p.max_turns, p.auto_pr])).toEqual([
      ["code", "sonnet", 80, true],
      ["review", "haiku", 20, false],
    ]);
  });

  it("reads user profiles from ~/.service/profiles/*/profile.yml, overriding a bundled one by name", async () => {
    const { config, user, write } = setup();
    write(
      user,
      "docs",
      "description: Writes docs\nmodel: opus\nmax_turns: 15\nauto_pr: true\npermission_mode: acceptEdits\ntimeout_seconds: 600\nallowed_tools: [Read, Edit]\nappend_system_prompt: Write plainly.\n",
    );
    write(user, "code", "model: opus\nmax_turns: 120\nauto_pr: true\n");
    const set = await loadProfiles(config);
    expect(set.get("docs")).toMatchObject({
      name: "docs",
      description: "Writes docs",
      model: "opus",
      max_turns: 15,
      auto_pr: true,
      permission_mode: "acceptEdits",
      timeout_seconds: 600,
      allowed_tools: ["Read", "Edit"],
      append_system_prompt: "Write plainly.",
      source: "user",
      dir: join(user, "docs"),
    });
    expect(set.get("code")).toMatchObject({ model: "opus", max_turns: 120, source: "user", permission_mode: "default" });
  });

  it("reports an invalid profile by name and skips it, keeping the others", async () => {
    const { config, user, write } = setup();
    write(user, "broken", "model: sonnet\nmax_turns: lots\n");
    write(user, "notyaml", "model: [unclosed\n");
    write(user, "wrongname", "name: other\nmodel: sonnet\nmax_turns: 3\n");
    mkdirSync(join(user, "empty"), { recursive: true });
    write(user, "fine", "model: sonnet\nmax_turns: 3\n");
    const set = await loadProfiles(config);
    expect(set.errors.map((e) => e.name).sort()).toEqual(["broken", "empty", "notyaml", "wrongname"]);
    expect(set.errors.find((e) => e.name === "broken")).toMatchObject({ path: join(user, "broken", "profile.yml") });
    expect(set.errors.find((e) => e.name === "broken")?.message).toContain("max_turns");
    expect(set.profiles.map((p) => p.name)).toEqual(["code", "fine", "review"]);
  });

  it("reads the hooks package's profiles (SERVICE_HOOKS_PATH), under the user's", async () => {
    const { home, config, user, write } = setup();
    const hooks = join(home, "hooks-pkg");
    write(join(hooks, "profiles"), "ops", "model: haiku\nmax_turns: 5\n");
    write(join(hooks, "profiles"), "docs", "model: haiku\nmax_turns: 5\n");
    write(user, "docs", "model: opus\nmax_turns: 9\n", "profile.yaml");
    const set = await loadProfiles({ ...config, hooksPath: hooks });
    expect(set.get("ops")).toMatchObject({ source: "hooks", model: "haiku" });
    expect(set.get("docs")).toMatchObject({ source: "user", model: "opus" });
  });

  it("finds the hooks clone of SERVICE_HOOKS_URL under the clone root", () => {
    const { config } = setup();
    expect(hooksPackageDir({ ...config, hooksUrl: "https://github.com/org/agentihooks.git", cloneRoot: "/clones" })).toBe("/clones/agentihooks");
    expect(hooksPackageDir({ ...config, hooksUrl: "git@github.com:org/agentihooks.git", sharedFsRoot: "/shared" })).toBe("/shared/agentihooks");
    expect(hooksPackageDir({ ...config, hooksUrl: "https://h/x/hooks", hooksPath: "/opt/hooks" })).toBe("/opt/hooks");
    expect(hooksPackageDir(config)).toBeUndefined();
  });
});

describe("profile selection", () => {
  it.each([
    ["Review PR #12 for security problems", "review"],
    ["Audit the dependency licences", "review"],
    ["Explain how the gate orders jobs", "review"],
    ["Summarize the last ten commits", "review"],
    ["Summarise the changes since v1.2", "review"],
    ["Review the fix in the retry loop", "review"],
    ["Fix the flaky cancel test", "code"],
    ["Add a --json flag to the jobs command", "code"],
    ["Fix the bug explained in issue 7", "code"],
    ["Bump zod to 4.1", "code"],
    ["Why does the build fail on arm64?", "review"],
    ["The README needs a section on profiles", "code"],
  ])("auto picks for %p: %s", (task, expected) => {
    expect(autoProfileName(task)).toBe(expected as "code" | "review");
  });

  it("takes an explicit profile, 'auto' and no profile", async () => {
    const set = await loadProfiles(setup().config);
    expect(set.select("Fix it", "review").name).toBe("review");
    expect(set.select("Review it", "auto").name).toBe("review");
    expect(set.select("Fix it").name).toBe("code");
    expect(set.select("Fix it", "CODE").name).toBe("code");
  });

  it("answers an unknown profile with a 400 naming the known ones", async () => {
    const set = await loadProfiles(setup().config);
    let err: unknown;
    try {
      set.select("anything", "nope");
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UnknownProfileError);
    expect(httpErrorOf(err)).toMatchObject({ status: 400, code: "unknown_profile" });
    expect((err as Error).message).toContain("auto, code, review");
  });
});

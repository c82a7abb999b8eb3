// The profiles (bundled, user, hooks package, shared root) as the job service's catalog and
// GET /profiles' listing. Read at start-up and again on every listing.
import type { OrchestratorConfig } from "../config";
import type { ProfileCatalog, ProfileLike } from "../execution/executor";
import type { ProfileList } from "./listing";
import { loadProfiles } from "./load";
import type { Profile } from "./profile";
import { UnknownProfileError } from "./select";

export type ListedProfileCatalog<P extends ProfileLike> = ProfileCatalog<P> & { list(): ProfileList | Promise<ProfileList> };

/** The loaded profiles as the job service and GET /profiles read them. */
export async function profileCatalog(config: OrchestratorConfig): Promise<ListedProfileCatalog<Profile>> {
  let set = await loadProfiles(config);
  return {
    select(task, requested) {
      try {
        return set.select(task, requested);
      } catch (err) {
        if (err instanceof UnknownProfileError) return undefined;
        throw err;
      }
    },
    names: () => set.profiles.map((p) => p.name),
    // Read again on every listing: a profile added on disk (or by POST /admin/sync) is usable from then on.
    async list() {
      set = await loadProfiles(config);
      return {
        profiles: set.profiles.map((p) => ({
          name: p.name,
          description: p.description,
          model: p.model,
          max_turns: p.max_turns,
          auto_pr: p.auto_pr,
          permission_mode: p.permission_mode,
          timeout_seconds: p.timeout_seconds ?? config.claudeTimeout,
          max_budget_usd: p.max_budget_usd ?? null,
          source: p.source,
        })),
        errors: set.errors.map((e) => ({ name: e.name, path: e.path, message: e.message })),
      };
    },
  };
}

// Profiles: what the job service, GET /profiles and the MCP tools use.
export { loadProfiles, hooksPackageDir, makeProfileSet, type ProfileError, type ProfileSet, type ProfilesConfig } from "./load";
export { AUTO, BUNDLED_PROFILES, PERMISSION_MODES, type PermissionMode, type Profile, type ProfileSource } from "./profile";
export { autoProfileName, selectProfile, UnknownProfileError } from "./select";

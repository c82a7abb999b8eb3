// REDIS_URL in logs and errors: apart from the Redis client, so a process that only names the
// URL (the router's start-up, with Redis off) does not load the client library.
/** The URL with its password replaced, fit for logs and error messages. */
export function maskRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "****";
    return parsed.toString();
  } catch {
    return url.replace(/\/\/[^@/]*@/, "//****@");
  }
}

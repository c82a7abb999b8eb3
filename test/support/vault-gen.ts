// Synthetic vaults for the benchmarks and the index suites: N markdown notes of 1–2 KB in raw/, written the
// way engineers write notes (frontmatter with tags, a title, "## " sections, lists, the odd
// shell command), on ten topics — deploys, incidents, databases, CI, auth, observability,
// networking, storage, frontend, cost — over a shared cast of services, tools and people.
// Everything comes from a seeded PRNG: the same (seed, count) gives byte-identical files.
// Word choice is skewed (a few words in each list are common, most are rare), so some queries
// match a fifth of the vault and others a handful of notes, as in a real one.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";

/** mulberry32: small, fast, good enough for text generation. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type Rng = () => number;

/** Uniform pick. */
export const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)]!;
/** Skewed pick: early entries are much more likely (≈ Zipf-like over the list's order). */
export const pickSkewed = <T>(rng: Rng, xs: readonly T[], skew = 2.2): T => xs[Math.floor(rng() ** skew * xs.length)]!;
const int = (rng: Rng, lo: number, hi: number) => lo + Math.floor(rng() * (hi - lo + 1));

export const SERVICES = [
  "checkout",
  "billing-api",
  "auth-gateway",
  "search-indexer",
  "ledger",
  "notifications",
  "web-frontend",
  "inventory",
  "payments-worker",
  "user-profile",
  "media-transcoder",
  "analytics-etl",
  "order-service",
  "shipping-quotes",
  "feature-store",
  "recommendations",
  "admin-console",
  "webhooks-relay",
  "pricing-engine",
  "fraud-scorer",
  "catalog-sync",
  "session-store",
  "email-sender",
  "report-builder",
  "mobile-bff",
  "geo-lookup",
  "audit-log",
  "tenant-manager",
  "rate-limiter",
  "image-resizer",
  "chat-relay",
  "ml-serving",
] as const;

export const PEOPLE = ["priya", "marcus", "lena", "tomas", "aiko", "dmitri", "sofia", "kwame", "jonas", "ines", "raj", "hannah"] as const;
const ENVS = ["production", "staging", "canary", "eu-west-1", "us-east-1", "the dev cluster"] as const;
const WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"] as const;

interface Topic {
  name: string;
  /** Folder under raw/. */
  folder: string;
  tags: readonly string[];
  /** Nouns, most common first. */
  nouns: readonly string[];
  verbs: readonly string[];
  tools: readonly string[];
  titles: readonly string[];
  headings: readonly string[];
  commands: readonly string[];
}

// Lists are ordered most-common first (pickSkewed).
export const TOPICS: readonly Topic[] = [
  {
    name: "deploys",
    folder: "deploys",
    tags: ["deploy", "release", "rollout", "kubernetes", "helm", "canary"],
    nouns: [
      "deploy",
      "rollout",
      "release",
      "rollback",
      "pipeline",
      "canary",
      "manifest",
      "image tag",
      "helm chart",
      "replica set",
      "readiness probe",
      "blue-green switch",
      "feature flag",
      "change freeze",
      "release train",
      "artifact",
      "deploy window",
      "argo sync",
    ],
    verbs: ["rolled out", "rolled back", "promoted", "paused", "redeployed", "pinned", "tagged", "shipped", "reverted", "drained"],
    tools: ["kubectl", "helm", "argocd", "spinnaker", "terraform", "flux", "skaffold"],
    titles: [
      "Deploy checklist for {svc}",
      "Rolling back {svc} after a bad release",
      "Canary rollout of {svc} {ver}",
      "Release notes {svc} {ver}",
      "Why the {svc} deploy stalled",
      "Helm chart changes for {svc}",
      "Blue-green cutover plan for {svc}",
    ],
    headings: ["Context", "Steps", "Rollback plan", "What went wrong", "Verification", "Follow-ups", "Timeline", "Open questions"],
    commands: [
      "kubectl rollout undo deployment/{svc}",
      "helm upgrade --install {svc} ./charts/{svc} --atomic",
      "argocd app sync {svc}",
      "kubectl rollout status deploy/{svc} --timeout=5m",
    ],
  },
  {
    name: "incidents",
    folder: "incidents",
    tags: ["incident", "postmortem", "oncall", "sev2", "sev1", "outage"],
    nouns: [
      "incident",
      "outage",
      "pager",
      "postmortem",
      "error rate",
      "timeline",
      "root cause",
      "mitigation",
      "customer impact",
      "status page",
      "on-call handover",
      "escalation",
      "blast radius",
      "degradation",
      "runbook",
      "war room",
      "action item",
    ],
    verbs: ["paged", "mitigated", "escalated", "acknowledged", "resolved", "failed over", "throttled", "restarted", "declared"],
    tools: ["pagerduty", "opsgenie", "statuspage", "grafana", "sentry", "slack"],
    titles: [
      "Postmortem: {svc} outage on {day}",
      "Incident {num}: elevated error rate in {svc}",
      "Sev2 {svc} degradation in {env}",
      "On-call notes week {num}",
      "Root cause of the {svc} timeouts",
      "Runbook: {svc} is returning 5xx",
    ],
    headings: ["Summary", "Impact", "Timeline", "Root cause", "Mitigation", "Action items", "Lessons", "Detection"],
    commands: ["kubectl logs -l app={svc} --since=1h | grep -c ERROR", "curl -sf https://{svc}.internal/healthz", "kubectl scale deploy/{svc} --replicas=12"],
  },
  {
    name: "databases",
    folder: "databases",
    tags: ["postgres", "database", "migration", "redis", "performance", "replication"],
    nouns: [
      "query",
      "index",
      "migration",
      "postgres",
      "replica",
      "connection pool",
      "vacuum",
      "deadlock",
      "transaction",
      "schema",
      "query plan",
      "sequential scan",
      "replication lag",
      "pgbouncer",
      "partition",
      "autovacuum",
      "write amplification",
      "foreign key",
    ],
    verbs: ["indexed", "vacuumed", "partitioned", "migrated", "backfilled", "analyzed", "locked", "replicated", "sharded", "tuned"],
    tools: ["psql", "pgbouncer", "pg_stat_statements", "redis-cli", "flyway", "pg_dump", "patroni"],
    titles: [
      "Slow queries in {svc}",
      "Migration plan: {svc} schema {ver}",
      "Postgres tuning notes for {svc}",
      "Replication lag on the {svc} replica",
      "Adding an index to {svc} orders",
      "Connection pool sizing for {svc}",
      "Redis memory in {svc}",
    ],
    headings: ["Problem", "Query plan", "Proposed change", "Migration steps", "Benchmarks", "Risks", "Rollback", "Notes"],
    commands: [
      "EXPLAIN (ANALYZE, BUFFERS) SELECT * FROM orders WHERE customer_id = $1;",
      "CREATE INDEX CONCURRENTLY idx_orders_customer ON orders (customer_id);",
      "SELECT * FROM pg_stat_activity WHERE state <> 'idle';",
      "redis-cli --bigkeys",
    ],
  },
  {
    name: "ci",
    folder: "ci",
    tags: ["ci", "build", "tests", "github-actions", "flaky", "cache"],
    nouns: [
      "build",
      "pipeline",
      "test suite",
      "flaky test",
      "runner",
      "cache",
      "artifact",
      "lint step",
      "merge queue",
      "workflow",
      "build minutes",
      "docker layer",
      "test shard",
      "coverage report",
      "monorepo",
      "dependency bump",
      "lockfile",
    ],
    verbs: ["cached", "sharded", "retried", "quarantined", "parallelized", "bisected", "pinned", "skipped", "rebuilt"],
    tools: ["github actions", "buildkite", "bazel", "jest", "pytest", "docker buildx", "renovate"],
    titles: [
      "Speeding up {svc} CI",
      "Flaky test quarantine for {svc}",
      "Build cache misses in {svc}",
      "Merge queue rollout",
      "CI cost review {ver}",
      "Why {svc} builds take 40 minutes",
      "Test sharding for {svc}",
    ],
    headings: ["Background", "Measurements", "Changes", "Results", "Next steps", "Known flakes", "Cache keys"],
    commands: [
      "docker buildx build --cache-from type=gha --cache-to type=gha,mode=max .",
      "bazel test //... --test_output=errors",
      "gh run rerun --failed {num}",
    ],
  },
  {
    name: "auth",
    folder: "auth",
    tags: ["auth", "oauth", "security", "sso", "tokens", "iam"],
    nouns: [
      "token",
      "session",
      "oauth flow",
      "refresh token",
      "jwt",
      "api key",
      "role",
      "permission",
      "sso login",
      "mfa",
      "service account",
      "scope",
      "audit trail",
      "password reset",
      "signing key",
      "saml assertion",
      "csrf token",
    ],
    verbs: ["rotated", "revoked", "expired", "issued", "validated", "scoped", "federated", "audited", "denied"],
    tools: ["keycloak", "okta", "vault", "auth0", "oauth2-proxy", "jose"],
    titles: [
      "Rotating signing keys for {svc}",
      "Token expiry bug in {svc}",
      "SSO rollout for {svc}",
      "Service accounts audit {ver}",
      "Least privilege roles for {svc}",
      "MFA enforcement plan",
      "Session handling in {svc}",
    ],
    headings: ["Threat model", "Current state", "Design", "Rollout", "Open risks", "Testing", "Decision"],
    commands: [
      "vault kv put secret/{svc}/jwt signing_key=@key.pem",
      "curl -H 'Authorization: Bearer $TOKEN' https://{svc}.internal/me",
      "openssl x509 -in cert.pem -noout -enddate",
    ],
  },
  {
    name: "observability",
    folder: "observability",
    tags: ["observability", "metrics", "alerts", "tracing", "logging", "slo"],
    nouns: [
      "dashboard",
      "alert",
      "metric",
      "trace",
      "span",
      "log line",
      "slo",
      "error budget",
      "latency histogram",
      "p99",
      "cardinality",
      "sampling rate",
      "exporter",
      "burn rate",
      "structured log",
      "retention",
    ],
    verbs: ["alerted", "sampled", "instrumented", "aggregated", "scraped", "silenced", "correlated", "exported"],
    tools: ["prometheus", "grafana", "opentelemetry", "loki", "tempo", "datadog", "alertmanager"],
    titles: [
      "SLOs for {svc}",
      "Alert tuning for {svc}",
      "Tracing {svc} end to end",
      "Dashboards cleanup {ver}",
      "High cardinality metrics in {svc}",
      "Log retention and cost",
      "Error budget policy",
    ],
    headings: ["Goals", "Signals", "Alerts", "Dashboards", "Gaps", "Queries", "Follow-ups"],
    commands: [
      'histogram_quantile(0.99, sum(rate(http_request_duration_seconds_bucket{app="{svc}"}[5m])) by (le))',
      'sum(rate(http_requests_total{app="{svc}",code=~"5.."}[5m]))',
      'logcli query \'{app="{svc}"} |= "timeout"\'',
    ],
  },
  {
    name: "networking",
    folder: "networking",
    tags: ["networking", "dns", "load-balancer", "tls", "ingress", "mesh"],
    nouns: [
      "load balancer",
      "dns record",
      "tls certificate",
      "ingress",
      "timeout",
      "retry",
      "service mesh",
      "sidecar",
      "vpc",
      "security group",
      "keepalive",
      "connection reset",
      "mtls",
      "circuit breaker",
      "egress",
      "cdn",
    ],
    verbs: ["routed", "resolved", "terminated", "proxied", "peered", "retried", "renewed", "blackholed"],
    tools: ["envoy", "istio", "nginx", "haproxy", "cloudflare", "cert-manager", "coredns"],
    titles: [
      "Ingress timeouts for {svc}",
      "DNS migration {ver}",
      "Certificate renewal for {svc}",
      "Retries and circuit breakers in {svc}",
      "Service mesh pilot with {svc}",
      "Connection resets between {svc} and the gateway",
    ],
    headings: ["Topology", "Symptoms", "Packet captures", "Config", "Fix", "Verification", "Notes"],
    commands: [
      "dig +short {svc}.internal",
      "curl -v --resolve {svc}.example.com:443:10.0.3.7 https://{svc}.example.com/",
      "kubectl -n istio-system logs deploy/istiod | tail",
    ],
  },
  {
    name: "storage",
    folder: "storage",
    tags: ["storage", "s3", "backups", "disk", "retention", "volumes"],
    nouns: [
      "backup",
      "snapshot",
      "bucket",
      "volume",
      "disk usage",
      "lifecycle rule",
      "restore drill",
      "object store",
      "retention policy",
      "iops",
      "encryption key",
      "replication",
      "archive tier",
      "inode",
    ],
    verbs: ["restored", "snapshotted", "archived", "expired", "encrypted", "resized", "compacted", "copied"],
    tools: ["s3", "restic", "velero", "minio", "rclone", "ebs"],
    titles: [
      "Backup restore drill {ver}",
      "Disk pressure on {svc} nodes",
      "S3 lifecycle rules for {svc}",
      "Volume resize for {svc}",
      "Retention policy review",
      "Snapshot schedule for {svc}",
    ],
    headings: ["Scope", "Procedure", "Results", "Gaps", "Schedule", "Costs"],
    commands: ["restic -r s3:backups/{svc} snapshots", "velero backup create {svc}-{num} --include-namespaces {svc}", "df -h /var/lib/docker"],
  },
  {
    name: "frontend",
    folder: "frontend",
    tags: ["frontend", "react", "performance", "accessibility", "bundle", "web"],
    nouns: [
      "bundle",
      "component",
      "page load",
      "hydration",
      "core web vitals",
      "css",
      "design system",
      "route",
      "service worker",
      "accessibility audit",
      "lighthouse score",
      "image lazy loading",
      "state management",
      "form validation",
    ],
    verbs: ["bundled", "lazy-loaded", "memoized", "hydrated", "prefetched", "refactored", "split", "audited"],
    tools: ["react", "vite", "webpack", "playwright", "storybook", "lighthouse", "typescript"],
    titles: [
      "Bundle size budget for {svc}",
      "Slow page load on {svc}",
      "Design system migration {ver}",
      "Accessibility fixes in {svc}",
      "Hydration errors in {svc}",
      "E2E tests for {svc} checkout flow",
    ],
    headings: ["Problem", "Measurements", "Approach", "Screenshots", "Results", "TODO"],
    commands: ["npx vite build --mode production", "npx playwright test --project=chromium", "npx source-map-explorer dist/*.js"],
  },
  {
    name: "cost",
    folder: "cost",
    tags: ["cost", "finops", "capacity", "autoscaling", "budget", "cloud"],
    nouns: [
      "cloud bill",
      "reserved instance",
      "spot instance",
      "autoscaler",
      "capacity plan",
      "node pool",
      "egress cost",
      "rightsizing",
      "savings plan",
      "idle resource",
      "cost allocation tag",
      "budget alert",
    ],
    verbs: ["rightsized", "scaled down", "reserved", "tagged", "consolidated", "forecast", "cut"],
    tools: ["karpenter", "cluster-autoscaler", "kubecost", "aws cost explorer", "infracost"],
    titles: [
      "Cloud cost review {ver}",
      "Rightsizing {svc} nodes",
      "Spot instances for {svc} workers",
      "Capacity plan for {svc}",
      "Egress costs from {svc}",
      "Autoscaling {svc} on queue depth",
    ],
    headings: ["Spend", "Breakdown", "Opportunities", "Plan", "Risks", "Savings"],
    commands: ["infracost breakdown --path ./infra/{svc}", "kubectl top nodes", "aws ce get-cost-and-usage --granularity MONTHLY"],
  },
];

const SENTENCES = [
  "{Person} noticed that {svc} {verb} the {noun} in {env} around {time}.",
  "The {noun} for {svc} is owned by {person}; ask before changing the {noun2}.",
  "We {verb} {svc} after the {noun} started failing, which took about {num} minutes.",
  "Using {tool}, the {noun} showed {num}% more {noun2} than last week.",
  "The {noun2} on {svc} looked fine, so the {noun} was the likely suspect.",
  "Next time, check the {noun} before touching the {noun2}; {tool} makes that quick.",
  "Action: {person} to document how the {noun} interacts with the {noun2} in {svc}.",
  "On {day} the {noun} in {env} {verb} twice, and {svc} saw a spike in {noun2}.",
  "There is a known gap: {svc} has no alert on the {noun}, only on the {noun2}.",
  "{tool} reports the {noun} at {num} per second for {svc}, which is within budget.",
  "The fix was small: the {noun} had a stale setting that {person} {verb} by hand.",
  "If the {noun} misbehaves again, page {person} and link this note.",
  "Most of the {noun2} work is already done; what remains is the {noun} in {env}.",
  "We agreed to keep the {noun} as it is until {svc} moves to {tool}.",
  "Numbers from {day}: {num} requests, {num2} errors, and one slow {noun}.",
];

export interface GeneratedNote {
  /** Vault-relative path, under raw/. */
  path: string;
  content: string;
  title: string;
  topic: string;
  tags: string[];
  service: string;
}

function fill(template: string, rng: Rng, topic: Topic, svc: string): string {
  return template.replace(/\{(\w+)\}/g, (_, key: string) => {
    switch (key) {
      case "svc":
        return svc;
      case "noun":
        return pickSkewed(rng, topic.nouns);
      case "noun2":
        return pickSkewed(rng, topic.nouns);
      case "verb":
        return pick(rng, topic.verbs);
      case "tool":
        return pickSkewed(rng, topic.tools);
      case "person":
        return pick(rng, PEOPLE);
      case "Person": {
        const p = pick(rng, PEOPLE);
        return p[0]!.toUpperCase() + p.slice(1);
      }
      case "env":
        return pick(rng, ENVS);
      case "day":
        return pick(rng, WEEKDAYS);
      case "time":
        return `${String(int(rng, 0, 23)).padStart(2, "0")}:${String(int(rng, 0, 59)).padStart(2, "0")} UTC`;
      case "num":
        return String(int(rng, 2, 95));
      case "num2":
        return String(int(rng, 1, 400));
      case "ver":
        return `v${int(rng, 1, 9)}.${int(rng, 0, 30)}`;
      default:
        return key;
    }
  });
}

function paragraph(rng: Rng, topic: Topic, svc: string): string {
  const n = int(rng, 2, 4);
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(fill(pick(rng, SENTENCES), rng, topic, svc));
  return out.join(" ");
}

/** A paragraph of 2–4 filler sentences on `topicName` (one of TOPICS) about service `svc`. */
export function fillerParagraph(rng: Rng, topicName: string, svc: string): string {
  const topic = TOPICS.find((t) => t.name === topicName) ?? TOPICS[0]!;
  return paragraph(rng, topic, svc);
}

export function slugify(text: string): string {
  return (
    text
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-|-$/g, "")
      .slice(0, 60) || "note"
  );
}

/**
 * Note number `i` of a vault generated from `seed`: a pure function of (seed, i), so a vault
 * of 100k holds the same first 10k notes as a vault of 10k.
 */
export function generateNote(seed: number, i: number): GeneratedNote {
  const rng = prng((seed * 1_000_003 + i * 7919) >>> 0);
  const topic = pickSkewed(rng, TOPICS, 1.4);
  const svc = pickSkewed(rng, SERVICES);
  const title = fill(pick(rng, topic.titles), rng, topic, svc);
  const tags = [...new Set([topic.name === "ci" ? "ci" : pickSkewed(rng, topic.tags), pick(rng, topic.tags), svc])];
  const year = 2022 + (i % 3);
  const month = 1 + Math.floor(rng() * 12);
  const date = `${year}-${String(month).padStart(2, "0")}-${String(int(rng, 1, 28)).padStart(2, "0")}`;
  const target = int(rng, 1024, 1900);

  const parts: string[] = [`---\ntitle: "${title}"\ntags: [${tags.join(", ")}]\ndate: ${date}\nauthor: ${pick(rng, PEOPLE)}\n---\n`, `# ${title}\n`];
  let size = parts.join("\n").length;
  const headings = [...topic.headings];
  while (size < target && headings.length > 0) {
    const h = headings.splice(Math.floor(rng() * Math.min(3, headings.length)), 1)[0]!;
    let block = `## ${h}\n\n${paragraph(rng, topic, svc)}\n`;
    const r = rng();
    if (r < 0.3) {
      const items = int(rng, 2, 4);
      const list: string[] = [];
      for (let k = 0; k < items; k++) list.push(`- ${fill(pick(rng, SENTENCES), rng, topic, svc)}`);
      block += `\n${list.join("\n")}\n`;
    } else if (r < 0.45) {
      block += `\n\`\`\`sh\n${fill(pick(rng, topic.commands), rng, topic, svc)}\n\`\`\`\n`;
    } else {
      block += `\n${paragraph(rng, topic, svc)}\n`;
    }
    parts.push(block);
    size += block.length + 1;
  }
  let content = parts.join("\n");
  if (content.length > 2048) content = `${content.slice(0, content.lastIndexOf(". ", 2040) + 1)}\n`;
  const path = `raw/${topic.folder}/${date.slice(0, 7)}/${slugify(title)}-${i}.md`;
  return { path, content, title, topic: topic.name, tags, service: svc };
}

/**
 * The kind POST /ingest gives a generated note (docs/router-api.md: an explicit type, then the
 * first tag naming a kind, then an @marker). The generator writes no type and no marker, and of
 * its tags only two name a kind: `incident` a signal, `release` a milestone.
 */
export function generatedKind(tags: readonly string[]): "note" | "signal" | "milestone" {
  for (const tag of tags) {
    if (tag === "incident") return "signal";
    if (tag === "release") return "milestone";
  }
  return "note";
}

export interface VaultStats {
  notes: number;
  bytes: number;
  ms: number;
}

export interface WriteVaultOptions {
  /**
   * Links appended to each note under "## Related" (issue 20's context bench): all but one
   * are [[wikilinks]] by file name, one a relative markdown link; targets mostly near the
   * note's number (a neighbourhood), some anywhere. 0 (default) writes no links.
   */
  linksPerNote?: number;
}

/** Writes notes [0, count) of `seed` under `vault` (creating raw/…); returns what it wrote. */
export function writeVault(vault: string, count: number, seed = 1, opts: WriteVaultOptions = {}): VaultStats {
  const t0 = performance.now();
  const made = new Set<string>();
  const links = opts.linksPerNote ?? 0;
  // Linking needs every note's path first: one pass for the paths, then the writing pass.
  const paths = links > 0 ? Array.from({ length: count }, (_, i) => generateNote(seed, i).path) : [];
  let bytes = 0;
  for (let i = 0; i < count; i++) {
    const note = generateNote(seed, i);
    const abs = join(vault, note.path);
    const dir = dirname(abs);
    if (!made.has(dir)) {
      mkdirSync(dir, { recursive: true });
      made.add(dir);
    }
    const content = links > 0 ? note.content + relatedSection(note.path, paths, i, links, seed) : note.content;
    writeFileSync(abs, content);
    bytes += Buffer.byteLength(content);
  }
  return { notes: count, bytes, ms: performance.now() - t0 };
}

function relatedSection(path: string, paths: readonly string[], i: number, links: number, seed: number): string {
  const rng = prng((seed * 7_919 + i * 1_000_003) >>> 0);
  const n = paths.length;
  const lines: string[] = [];
  for (let k = 0; k < links; k++) {
    const j = rng() < 0.8 ? (i + int(rng, 1, 60) * (rng() < 0.5 ? -1 : 1) + n) % n : Math.floor(rng() * n);
    const target = paths[j]!;
    const name = target.slice(target.lastIndexOf("/") + 1, -".md".length);
    lines.push(k === 0 ? `- [${name}](${relative(dirname(path), target)})` : `- [[${name}]]`);
  }
  return `\n## Related\n\n${lines.join("\n")}\n`;
}

/**
 * The fixed query set for the search benchmark: common and rare words, two- and three-word
 * queries, phrases, tag filters, a service name, and one that matches nothing.
 */
export const BENCH_QUERIES: readonly string[] = [
  "deploy",
  "rollback",
  "postgres",
  "incident",
  "token",
  "latency",
  "flaky test",
  "connection pool",
  "checkout outage",
  "billing-api migration",
  "replication lag",
  "deadlock transaction",
  "canary rollout",
  '"root cause"',
  '"connection pool" pgbouncer',
  '"feature flag" rollback',
  "helm chart upgrade",
  "refresh token expired",
  "sso login okta",
  "signing key rotated",
  "pager escalation runbook",
  "tag:incident timeout",
  "tag:postgres vacuum",
  "tag:deploy canary",
  "ledger",
  "fraud-scorer",
  "sequential scan index",
  "error budget burn rate",
  "tls certificate renewed",
  "dns record resolved",
  "restore drill snapshot",
  "bundle size hydration",
  "spot instance autoscaler",
  "merge queue",
  "priya pipeline",
  "test shard cache",
  "status page customer impact",
  "cardinality exporter",
  "egress cost",
  "zebra quantum",
];

/** Notes to POST to /ingest: different seed from the vault, so nothing is a duplicate. */
export function ingestBodies(count: number, seed = 7): Array<{ content: string; tags: string[] }> {
  const out: Array<{ content: string; tags: string[] }> = [];
  for (let i = 0; i < count; i++) {
    const note = generateNote(seed, i);
    out.push({ content: `${note.content}\n<!-- bench ${seed}:${i} -->\n`, tags: ["bench"] });
  }
  return out;
}

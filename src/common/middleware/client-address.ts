// The address a request came from, as Bun's server saw it (no proxy header is trusted: a
// client could forge one). "unknown" under app.request() in tests.
export interface AddressServer {
  requestIP?: (req: Request) => { address: string } | null;
}

export function clientAddress(req: Request, server: AddressServer | undefined): string {
  try {
    return server?.requestIP?.(req)?.address ?? "unknown";
  } catch {
    return "unknown";
  }
}

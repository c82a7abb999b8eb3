// One running turn per conversation (spec: Limits, "conversation turns … are bounded to one
// running turn per conversation"). In-process: an agent-mode pod serves its own conversations,
// and the session transcript the turn writes lives on this pod's disk.
export class TurnLocks {
  private readonly running = new Set<string>();

  /** The release function, or undefined when a turn of this conversation is running. */
  tryAcquire(key: string): (() => void) | undefined {
    if (this.running.has(key)) return undefined;
    this.running.add(key);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running.delete(key);
    };
  }

  get size(): number {
    return this.running.size;
  }
}

/**
 * Group commit for small ordered inserts that many requests make at once: every refresh of the
 * token endpoint inserts its used token's claim and the successor (src/data/accounts/oauth-records.ts).
 *
 * The first insert goes out at once. While it is under way, the inserts of other requests wait
 * and then go out together, in arrival order, as one ordered `insertMany`: one command, one
 * transaction and one commit for the group instead of one each: a command's fixed cost in the
 * database and the driver is shared (docs/benchmarks.md, "Group commit of refreshes").
 *
 * Each caller's promise settles when its own documents are stored, never before: what is
 * acknowledged is as durable as a lone insert. The group is ordered, so a failing document stops
 * the rest: the callers whose documents came before it are done, the caller it belongs to gets
 * the error with the failing document's index in its own list (InsertRefused), and the callers
 * after it go out again in the next group, as if they had come later.
 */
export class GroupedInserts<T> {
  private waiting: Pending<T>[] = [];
  private sending = false;

  constructor(
    private readonly insertOrdered: (docs: T[]) => Promise<unknown>,
    private readonly maxDocuments = MAX_GROUP_DOCUMENTS,
  ) {}

  /**
   * Inserts `docs` in order, alone or with the inserts of others waiting at the same time.
   * Rejects with InsertRefused when one of them was refused (those before it are stored), or with
   * the driver's error when the whole command failed.
   */
  insert(docs: T[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ docs, resolve, reject });
      if (!this.sending) void this.sendAll();
    });
  }

  private async sendAll(): Promise<void> {
    this.sending = true;
    while (this.waiting.length > 0) this.waiting.unshift(...(await this.send(this.nextGroup())));
    this.sending = false;
  }

  /** The longest run of waiting inserts within maxDocuments (at least one, whatever its size). */
  private nextGroup(): Pending<T>[] {
    let count = 0;
    let taken = 0;
    for (const pending of this.waiting) {
      if (taken > 0 && count + pending.docs.length > this.maxDocuments) break;
      count += pending.docs.length;
      taken++;
    }
    return this.waiting.splice(0, taken);
  }

  /** Sends one group; returns the inserts to send again (those after a refused document). */
  private async send(group: Pending<T>[]): Promise<Pending<T>[]> {
    try {
      await this.insertOrdered(group.flatMap((pending) => pending.docs));
    } catch (err) {
      return settleFailed(group, err);
    }
    for (const pending of group) pending.resolve();
    return [];
  }
}

/** A document of a group was refused: `index` is its place in its caller's own list. */
export class InsertRefused extends Error {
  override name = 'InsertRefused';

  constructor(
    override readonly cause: unknown,
    readonly index: number,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
  }
}

interface Pending<T> {
  readonly docs: T[];
  resolve(): void;
  reject(err: unknown): void;
}

/** Documents in one group at most (a refresh brings two). */
const MAX_GROUP_DOCUMENTS = 64;

/** Settles a failed group as the ordered insert left it; returns the inserts never tried. */
function settleFailed<T>(group: Pending<T>[], err: unknown): Pending<T>[] {
  const failedAt = failedIndex(err);
  if (failedAt === undefined) {
    for (const pending of group) pending.reject(err);
    return [];
  }
  let start = 0;
  const notTried: Pending<T>[] = [];
  for (const pending of group) {
    const end = start + pending.docs.length;
    if (end <= failedAt) pending.resolve();
    else if (start <= failedAt) pending.reject(new InsertRefused(err, failedAt - start));
    else notTried.push(pending);
    start = end;
  }
  return notTried;
}

/** Which document of an ordered insertMany failed (the driver's bulk write error lists them). */
function failedIndex(err: unknown): number | undefined {
  const writeErrors: unknown = typeof err === 'object' && err !== null && 'writeErrors' in err ? err.writeErrors : undefined;
  const first: unknown = Array.isArray(writeErrors) ? writeErrors[0] : writeErrors;
  return typeof first === 'object' && first !== null && 'index' in first && typeof first.index === 'number' ? first.index : undefined;
}

import { LRUCache } from 'lru-cache';
import { currentBudget, outsideRequestBudget } from '../platform/budget.js';
import type { ClubDoc, ClubModel } from '../models/club.model.js';
import type { ProjectDoc, ProjectModel } from '../models/project.model.js';
import type { StudentDoc, StudentModel } from '../models/student.model.js';
import { pageOf, type ListQuery, type SortRule } from './queries/page.js';
import type { DataTelemetry } from '../platform/telemetry.js';
import type { DataVersions } from '../platform/versions.js';

/** One page of a list query and the number of records that match it. */
export interface PageResult<T> {
  readonly items: T[];
  readonly total: number;
}

/** Filters (with their order) whose matching records a RecordList keeps, the most recently used. */
const MAX_KEPT_FILTERS = 64;

/**
 * The records of one kind, in id order, with a look-up by id and each sort's order computed
 * once (on first use) and kept for the life of the snapshot. The records that match a filter,
 * in a sort's order, are kept too (for the last MAX_KEPT_FILTERS filters used): a page of a
 * query asked before is then a slice, whatever the size of the school (on 10,000 students an
 * answer must cost about what it costs on 1,000: docs/benchmarks.md, "Uncached reads"), and a new
 * one is one pass over an ordered array with its test.
 */
export class RecordList<T extends { _id: number }> {
  private readonly byId: Map<number, T>;
  private readonly orders = new Map<string, readonly T[]>();
  private readonly matching = new LRUCache<string, readonly T[]>({ max: MAX_KEPT_FILTERS });

  /** `records` in id order. */
  constructor(readonly all: readonly T[]) {
    this.byId = new Map(all.map((record) => [record._id, record]));
  }

  get size(): number {
    return this.all.length;
  }

  get(id: number): T | undefined {
    return this.byId.get(id);
  }

  /** The records in the order of `sort` (computed once per sort). */
  ordered(sort: SortRule<T>): readonly T[] {
    let order = this.orders.get(sort.key);
    if (!order) {
      order = [...this.all].sort(sort.compare);
      this.orders.set(sort.key, order);
    }
    return order;
  }

  /**
   * One page of `query`. A query naming an id looks it up; `candidates` (a short list a query
   * narrowed itself to, e.g. a club's projects) are sorted as they are; otherwise the page is a
   * slice of the records that match the query's filter in its order.
   */
  page(query: ListQuery<T>, page: number, size: number, candidates?: readonly T[]): PageResult<T> {
    if (query.id !== undefined) {
      const record = this.get(query.id);
      return pageOf(record ? [record] : [], query.matches, page, size);
    }
    if (candidates) return pageOf([...candidates].sort(query.sort.compare), query.matches, page, size);
    const matching = this.matchingOf(query);
    const start = page * size;
    return { items: matching.slice(start, start + size), total: matching.length };
  }

  /** The records that match `query`'s filter, in its order (computed once per filter and order while kept). */
  private matchingOf(query: ListQuery<T>): readonly T[] {
    const key = `${query.sort.key} ${query.filterKey}`;
    let matching = this.matching.get(key);
    if (!matching) {
      matching = this.ordered(query.sort).filter(query.matches);
      this.matching.set(key, matching);
    }
    return matching;
  }
}

/**
 * The school (students, clubs, projects) at one data version, indexed for every read the data
 * API makes: by id, by email (an account's student), by club membership, and projects by club.
 * Immutable: a new version is a new snapshot, so a request holding one sees one consistent school.
 */
export class SchoolSnapshot {
  readonly students: RecordList<StudentDoc>;
  readonly clubs: RecordList<ClubDoc>;
  readonly projects: RecordList<ProjectDoc>;
  private readonly byEmail = new Map<string, StudentDoc>();
  private readonly members = new Map<number, StudentDoc[]>();
  private readonly projectsByClub = new Map<number, ProjectDoc[]>();

  constructor(
    /** The data version the records were read at (or after). */
    readonly version: number,
    students: StudentDoc[],
    clubs: ClubDoc[],
    projects: ProjectDoc[],
  ) {
    const byId = (a: { _id: number }, b: { _id: number }) => a._id - b._id;
    this.students = new RecordList(students.sort(byId));
    this.clubs = new RecordList(clubs.sort(byId));
    this.projects = new RecordList(projects.sort(byId));
    for (const student of this.students.all) {
      this.byEmail.set(student.email.trim().toLowerCase(), student);
      // A student in the same club twice (major and autonomous) is one member.
      for (const clubId of new Set([student.majorClubId, student.autonomousClubId])) {
        if (clubId != null) push(this.members, clubId, student);
      }
    }
    for (const project of this.projects.all) {
      if (project.clubId != null) push(this.projectsByClub, project.clubId, project);
    }
  }

  /** The student whose email is `email` (case-insensitive), if any. */
  studentByEmail(email: string): StudentDoc | undefined {
    return this.byEmail.get(email.trim().toLowerCase());
  }

  /** Students whose major or autonomous club is `clubId`, in id order. */
  membersOf(clubId: number): readonly StudentDoc[] {
    return this.members.get(clubId) ?? [];
  }

  studentPage(query: ListQuery<StudentDoc>, page: number, size: number): PageResult<StudentDoc> {
    return this.students.page(query, page, size);
  }

  clubPage(query: ListQuery<ClubDoc>, page: number, size: number): PageResult<ClubDoc> {
    return this.clubs.page(query, page, size);
  }

  projectPage(query: ListQuery<ProjectDoc>, page: number, size: number): PageResult<ProjectDoc> {
    const ofClub = query.clubId === undefined ? undefined : (this.projectsByClub.get(query.clubId) ?? []);
    return this.projects.page(query, page, size, ofClub);
  }
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** What the read model reads from: the three collections, the data version, and telemetry. */
export interface ReadModelSource {
  readonly models: { readonly students: StudentModel; readonly clubs: ClubModel; readonly projects: ProjectModel };
  readonly versions: DataVersions;
  readonly telemetry: DataTelemetry;
  /**
   * Runs a read of the records as one settled state (src/data/school/engine.ts readSettled): never
   * while a batch is half-written. Absent, the records are read as they are.
   */
  readonly settled?: <T>(read: () => Promise<T>) => Promise<T>;
}

/** One round trip per collection: the driver's default first batch (101) would add getMore calls. */
const BATCH = 100_000;

/**
 * The school held in memory, one snapshot per data version. The data API's uncached reads of
 * students, clubs and projects are answered from it instead of the database, where FerretDB
 * would scan and decode a whole collection for every filter and sort.
 *
 * Correctness across writes and processes rests on the data version (src/data/platform/versions.ts),
 * which every write of served data moves after writing: a snapshot is used only while the
 * version it was read at is the current one. The version is read before the records, so a
 * snapshot may hold changes newer than its version (it is then replaced at the next version)
 * but never older ones. A load is single-flight (concurrent requests of one version share it)
 * and runs outside any request's time budget: it is shared work, and a request waiting for it
 * still gives up at its own deadline while the load carries on for the others.
 */
export class SchoolReadModel {
  private latest: SchoolSnapshot | undefined;
  private loading: { version: number; promise: Promise<SchoolSnapshot> } | undefined;
  /** Loads are numbered as they start: versions are random (src/data/platform/versions.ts), not ordered. */
  private loadsStarted = 0;
  private latestLoad = 0;

  constructor(private readonly source: ReadModelSource) {}

  /** The snapshot of the current data version, loading it when this version has none yet. */
  async snapshot(): Promise<SchoolSnapshot> {
    const { data: version } = this.source.versions.peek() ?? (await this.source.versions.current());
    if (this.latest?.version === version) return this.latest;
    const load = this.loadOnce(version);
    const budget = currentBudget();
    return budget ? budget.race(load) : load;
  }

  /** The snapshot held now, without loading (undefined before the first load). */
  peek(): SchoolSnapshot | undefined {
    return this.latest;
  }

  private loadOnce(version: number): Promise<SchoolSnapshot> {
    if (this.loading?.version === version) return this.loading.promise;
    const promise = outsideRequestBudget(() => this.load(version));
    const loading = { version, promise };
    const order = ++this.loadsStarted;
    this.loading = loading;
    promise.then(
      (snapshot) => {
        // The load begun last read the newest records, whichever finishes first.
        if (order > this.latestLoad) {
          this.latest = snapshot;
          this.latestLoad = order;
        }
        if (this.loading === loading) this.loading = undefined;
      },
      () => {
        // The next caller tries again (e.g. once the database is back).
        if (this.loading === loading) this.loading = undefined;
      },
    );
    return promise;
  }

  private async load(version: number): Promise<SchoolSnapshot> {
    const started = performance.now();
    const { students, clubs, projects } = this.source.models;
    const read = () =>
      Promise.all([
        students.find({}).batchSize(BATCH).lean<StudentDoc[]>(),
        clubs.find({}).batchSize(BATCH).lean<ClubDoc[]>(),
        projects.find({}).batchSize(BATCH).lean<ProjectDoc[]>(),
      ]);
    const [studentDocs, clubDocs, projectDocs] = await (this.source.settled ? this.source.settled(read) : read());
    const snapshot = new SchoolSnapshot(version, studentDocs, clubDocs, projectDocs);
    this.source.telemetry.readModelLoad({
      version,
      seconds: (performance.now() - started) / 1000,
      students: snapshot.students.size,
      clubs: snapshot.clubs.size,
      projects: snapshot.projects.size,
    });
    return snapshot;
  }
}

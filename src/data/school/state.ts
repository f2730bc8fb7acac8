import type { Database } from '../database.js';
import type { ClubDoc } from '../models/club.model.js';
import type { ProjectDoc } from '../models/project.model.js';
import { isEnrolledRole, type StudentDoc } from '../models/student.model.js';
import { studentValues } from './student-record.js';
import type { DocOf, RecordDiff, SchoolEntity } from './types.js';

/** The id of the `meta` document that remembers the highest id ever given per kind (ids are never reused). */
const IDS_DOC = 'school-ids';

/** Where to load from, per kind. */
const ENTITIES: readonly SchoolEntity[] = ['STUDENT', 'CLUB', 'PROJECT'];

/**
 * The school's records in memory, the way a change will leave them. Every write plans on one:
 * it is loaded under the write lock (src/data/school/engine.ts), changed by the operations of
 * src/data/school/operations.ts, validated as a whole by src/data/school/rules.ts (so swaps and
 * moves are judged on the final state, not row by row), and its difference from what was loaded
 * is what gets written. A school is a few thousand records, so holding them is cheap.
 */
export class SchoolState {
  private readonly current: { [E in SchoolEntity]: Map<number, DocOf[E]> };
  private readonly touched = new Set<string>();
  private readonly nextIds: Record<SchoolEntity, number>;
  private readonly emails = new Index();
  private readonly seats = new Index();
  private readonly clubNames = new Index();
  private readonly projectNames = new Index();

  private constructor(
    private readonly original: { readonly [E in SchoolEntity]: ReadonlyMap<number, DocOf[E]> },
    highestIds: Partial<Record<SchoolEntity, number>>,
  ) {
    this.current = { STUDENT: new Map(original.STUDENT), CLUB: new Map(original.CLUB), PROJECT: new Map(original.PROJECT) };
    this.nextIds = { STUDENT: 1, CLUB: 1, PROJECT: 1 };
    for (const entity of ENTITIES) {
      const highest = Math.max(highestIds[entity] ?? 0, ...[...original[entity].keys()], 0);
      this.nextIds[entity] = highest + 1;
    }
    for (const s of original.STUDENT.values()) this.indexStudent(s, 1);
    for (const c of original.CLUB.values()) this.clubNames.add(nameKey(c.name), c._id);
    for (const pr of original.PROJECT.values()) this.projectNames.add(nameKey(pr.name), pr._id);
  }

  /** Reads every student, club and project (one query each). */
  static async load(db: Database): Promise<SchoolState> {
    const { students, clubs, projects } = db.models;
    const [s, c, p, ids] = await Promise.all([
      students.find({}).batchSize(10000).lean<StudentDoc[]>(),
      clubs.find({}).batchSize(10000).lean<ClubDoc[]>(),
      projects.find({}).batchSize(10000).lean<ProjectDoc[]>(),
      db.connection.collection('meta').findOne({ _id: IDS_DOC } as never),
    ]);
    return SchoolState.of(
      { students: s.map(normalizeStudent), clubs: c.map(normalizeClub), projects: p.map(normalizeProject) },
      { STUDENT: Number(ids?.['STUDENT'] ?? 0), CLUB: Number(ids?.['CLUB'] ?? 0), PROJECT: Number(ids?.['PROJECT'] ?? 0) },
    );
  }

  /** A state over the given records (tests and pure planning). */
  static of(
    records: { students?: StudentDoc[]; clubs?: ClubDoc[]; projects?: ProjectDoc[] },
    highestIds: Partial<Record<SchoolEntity, number>> = {},
  ): SchoolState {
    return new SchoolState(
      {
        STUDENT: new Map((records.students ?? []).map((d) => [d._id, d])),
        CLUB: new Map((records.clubs ?? []).map((d) => [d._id, d])),
        PROJECT: new Map((records.projects ?? []).map((d) => [d._id, d])),
      },
      highestIds,
    );
  }

  /** The highest id given per kind, after this state's new records (remembered on commit). */
  highestIds(): Record<SchoolEntity, number> {
    return { STUDENT: this.nextIds.STUDENT - 1, CLUB: this.nextIds.CLUB - 1, PROJECT: this.nextIds.PROJECT - 1 };
  }

  get<E extends SchoolEntity>(entity: E, id: number): DocOf[E] | undefined {
    return this.current[entity].get(id);
  }

  /** The record as it was loaded (before this state's changes). */
  before<E extends SchoolEntity>(entity: E, id: number): DocOf[E] | undefined {
    return this.original[entity].get(id);
  }

  all<E extends SchoolEntity>(entity: E): IterableIterator<DocOf[E]> {
    return this.current[entity].values();
  }

  /** A fresh id for a new record of `entity`. */
  newId(entity: SchoolEntity): number {
    const id = this.nextIds[entity];
    this.nextIds[entity] = id + 1;
    return id;
  }

  /** Writes (adds or replaces) a record in the state. */
  put<E extends SchoolEntity>(entity: E, doc: DocOf[E]): void {
    this.unindex(entity, doc._id);
    (this.current[entity] as Map<number, DocOf[E]>).set(doc._id, doc);
    this.index(entity, doc);
    this.touched.add(key(entity, doc._id));
  }

  /** Removes a record from the state. */
  remove(entity: SchoolEntity, id: number): void {
    this.unindex(entity, id);
    this.current[entity].delete(id);
    this.touched.add(key(entity, id));
  }

  /** Students with this email (lower-cased), now. */
  studentsByEmail(email: string): number[] {
    return this.emails.get(email.trim().toLowerCase());
  }

  /** Enrolled students in this seat, now. */
  studentsBySeat(grade: number, classNum: number, number: number): number[] {
    return this.seats.get(`${grade}-${classNum}-${number}`);
  }

  clubsByName(name: string): number[] {
    return this.clubNames.get(nameKey(name));
  }

  projectsByName(name: string): number[] {
    return this.projectNames.get(nameKey(name));
  }

  /** Students whose major or autonomous club is `clubId`, by id. */
  membersOf(club: Pick<ClubDoc, '_id' | 'type'>): StudentDoc[] {
    const field = club.type === 'MAJOR_CLUB' ? 'majorClubId' : 'autonomousClubId';
    return [...this.current.STUDENT.values()].filter((s) => s[field] === club._id).sort((a, b) => a._id - b._id);
  }

  /** The records changed so far (each once, whatever the number of steps), in a stable order. */
  diffs(): RecordDiff[] {
    const diffs: RecordDiff[] = [];
    for (const k of [...this.touched].sort(compareKeys)) {
      const [entity, idText] = k.split(':') as [SchoolEntity, string];
      const id = Number(idText);
      const before = this.original[entity].get(id) ?? null;
      const after = this.current[entity].get(id) ?? null;
      if (!sameRecord(before, after)) diffs.push({ entity, id, before, after });
    }
    return diffs;
  }

  /** The records touched so far (changed or not), as entity and id. */
  touchedRecords(): { entity: SchoolEntity; id: number }[] {
    return [...this.touched].sort(compareKeys).map((k) => {
      const [entity, idText] = k.split(':') as [SchoolEntity, string];
      return { entity, id: Number(idText) };
    });
  }

  private index(entity: SchoolEntity, doc: DocOf[SchoolEntity]): void {
    if (entity === 'STUDENT') this.indexStudent(doc as StudentDoc, 1);
    else if (entity === 'CLUB') this.clubNames.add(nameKey((doc as ClubDoc).name), doc._id);
    else this.projectNames.add(nameKey((doc as ProjectDoc).name), doc._id);
  }

  private unindex(entity: SchoolEntity, id: number): void {
    const doc = this.current[entity].get(id);
    if (!doc) return;
    if (entity === 'STUDENT') this.indexStudent(doc as StudentDoc, -1);
    else if (entity === 'CLUB') this.clubNames.delete(nameKey((doc as ClubDoc).name), id);
    else this.projectNames.delete(nameKey((doc as ProjectDoc).name), id);
  }

  private indexStudent(s: StudentDoc, sign: 1 | -1): void {
    const email = s.email.trim().toLowerCase();
    const seat =
      isEnrolledRole(s.role) && s.grade != null && s.classNum != null && s.number != null ? `${s.grade}-${s.classNum}-${s.number}` : null;
    if (sign > 0) {
      this.emails.add(email, s._id);
      if (seat) this.seats.add(seat, s._id);
    } else {
      this.emails.delete(email, s._id);
      if (seat) this.seats.delete(seat, s._id);
    }
  }
}

/** Remembers the highest ids given, so a deleted record's id is never given again. */
export async function rememberHighestIds(db: Database, ids: Record<SchoolEntity, number>): Promise<void> {
  const meta = db.connection.collection('meta');
  const stored = await meta.findOne({ _id: IDS_DOC } as never);
  const next = Object.fromEntries(ENTITIES.map((e) => [e, Math.max(Number(stored?.[e] ?? 0), ids[e])]));
  await meta.updateOne({ _id: IDS_DOC } as never, { $set: next }, { upsert: true });
}

/** Names are unique whatever their case and surrounding spaces. */
export function nameKey(name: string): string {
  return name.normalize('NFC').trim().toLowerCase();
}

/** A multimap from a key to record ids (duplicates are possible mid-plan; the rules report them). */
class Index {
  private readonly map = new Map<string, Set<number>>();
  add(k: string, id: number): void {
    let ids = this.map.get(k);
    if (!ids) this.map.set(k, (ids = new Set()));
    ids.add(id);
  }
  delete(k: string, id: number): void {
    this.map.get(k)?.delete(id);
  }
  get(k: string): number[] {
    return [...(this.map.get(k) ?? [])].sort((a, b) => a - b);
  }
}

function key(entity: SchoolEntity, id: number): string {
  return `${entity}:${id}`;
}

const ENTITY_ORDER: Record<SchoolEntity, number> = { STUDENT: 0, CLUB: 1, PROJECT: 2 };
function compareKeys(a: string, b: string): number {
  const [ea, ia] = a.split(':') as [SchoolEntity, string];
  const [eb, ib] = b.split(':') as [SchoolEntity, string];
  return ENTITY_ORDER[ea] - ENTITY_ORDER[eb] || Number(ia) - Number(ib);
}

/** True when two versions of a record hold the same values (a missing field reads as null). */
export function sameRecord(a: object | null, b: object | null): boolean {
  if (a === null || b === null) return a === b;
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  const keys = new Set([...Object.keys(ra), ...Object.keys(rb)]);
  for (const k of keys) if (!sameValue(ra[k], rb[k])) return false;
  return true;
}

/** Field values: primitives, null, or arrays of numbers. */
export function sameValue(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((v, i) => sameValue(v, b[i]));
  }
  return (a ?? null) === (b ?? null);
}

/** Every field present (older records may lack the optional ones), in the model's order. */
export function normalizeStudent(d: StudentDoc): StudentDoc {
  return {
    _id: d._id,
    ...studentValues(d),
    majorClubId: d.majorClubId ?? null,
    autonomousClubId: d.autonomousClubId ?? null,
    specialty: d.specialty ?? null,
    githubId: d.githubId ?? null,
    githubUrl: d.githubUrl ?? null,
    enrolledRank: d.enrolledRank,
    dormitoryRank: d.dormitoryRank,
  };
}

export function normalizeClub(d: ClubDoc): ClubDoc {
  return {
    _id: d._id,
    name: d.name,
    type: d.type,
    leaderId: d.leaderId ?? null,
    foundedYear: d.foundedYear ?? null,
    status: d.status ?? 'ACTIVE',
    abolishedYear: d.abolishedYear ?? null,
  };
}

export function normalizeProject(d: ProjectDoc): ProjectDoc {
  return {
    _id: d._id,
    name: d.name,
    description: d.description ?? '',
    clubId: d.clubId ?? null,
    participantIds: [...(d.participantIds ?? [])],
    startYear: d.startYear ?? null,
    endYear: d.endYear ?? null,
    status: d.status ?? 'ACTIVE',
  };
}

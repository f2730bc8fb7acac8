import type { Database } from '../database.js';
import { commitBatch, withSchoolLock } from './engine.js';
import {
  deleteClub,
  deleteProject,
  deleteStudent,
  putClub,
  putProject,
  putStudent,
  reactivateStudent,
  retireStudent,
  schoolYear,
  type ClubPatch,
  type ProjectPatch,
  type StepResult,
  type StudentPatch,
} from './operations.js';
import { validateState } from './rules.js';
import { SchoolState } from './state.js';
import type { Actor, AuditAction, Issue, SchoolEntity } from './types.js';

/** The result of a form-sized write: the record's id, or the problems that refused it. */
export interface WriteOutcome {
  readonly id: number | null;
  readonly issues: readonly Issue[];
  /** The audit batch (null when refused, or when nothing changed). */
  readonly batchId: string | null;
}

export interface WriterClock {
  readonly timeZone: string;
  readonly now: () => Date;
}

/**
 * The one write path of school data for single records (the GraphQL mutations call it with the
 * signed-in account, the tests and scripts with any actor): under the write lock, the current
 * state is loaded, the step applied, the whole result validated, and the difference journaled,
 * applied and announced (src/data/school/engine.ts). Imports and the rollover take the same path
 * in bulk (src/data/school/import.ts, rollover.ts).
 */
export class SchoolWriter {
  constructor(
    private readonly db: Database,
    private readonly actor: Actor,
    private readonly clock: WriterClock = { timeZone: 'Asia/Seoul', now: () => new Date() },
  ) {}

  createStudent(patch: StudentPatch): Promise<WriteOutcome> {
    return this.run('STUDENT', 'CREATE', (s) => putStudent(s, null, patch));
  }
  updateStudent(id: number, patch: StudentPatch): Promise<WriteOutcome> {
    return this.run('STUDENT', 'UPDATE', (s) => {
      // Graduating and withdrawing clear records and club roles: they are actions of their own.
      if (patch.role === 'GRADUATE' || patch.role === 'WITHDRAWN') return { id: null, issues: [{ field: 'role', code: 'RETIRED_ROLE' }] };
      return putStudent(s, id, patch);
    });
  }
  graduateStudent(id: number): Promise<WriteOutcome> {
    return this.run('STUDENT', 'GRADUATE', (s) => retireStudent(s, id, 'GRADUATE'));
  }
  withdrawStudent(id: number): Promise<WriteOutcome> {
    return this.run('STUDENT', 'WITHDRAW', (s) => retireStudent(s, id, 'WITHDRAWN'));
  }
  reactivateStudent(id: number, input: Parameters<typeof reactivateStudent>[2]): Promise<WriteOutcome> {
    return this.run('STUDENT', 'REACTIVATE', (s) => reactivateStudent(s, id, input));
  }
  deleteStudent(id: number): Promise<WriteOutcome> {
    return this.run('STUDENT', 'DELETE', (s) => deleteStudent(s, id));
  }
  createClub(patch: ClubPatch): Promise<WriteOutcome> {
    return this.run('CLUB', 'CREATE', (s) => putClub(s, null, patch, this.year()));
  }
  updateClub(id: number, patch: ClubPatch): Promise<WriteOutcome> {
    return this.run('CLUB', patch.status === 'ABOLISHED' ? 'ABOLISH' : 'UPDATE', (s) => putClub(s, id, patch, this.year()));
  }
  abolishClub(id: number, year: number | null): Promise<WriteOutcome> {
    return this.run('CLUB', 'ABOLISH', (s) => {
      const club = s.get('CLUB', id);
      if (club?.status === 'ABOLISHED')
        return { id: null, issues: [{ field: 'status', code: 'ALREADY', params: { stateKo: '폐지', stateEn: 'abolished' } }] };
      return putClub(s, id, { status: 'ABOLISHED', abolishedYear: year ?? this.year() }, this.year());
    });
  }
  deleteClub(id: number): Promise<WriteOutcome> {
    return this.run('CLUB', 'DELETE', (s) => deleteClub(s, id));
  }
  createProject(patch: ProjectPatch): Promise<WriteOutcome> {
    return this.run('PROJECT', 'CREATE', (s) => putProject(s, null, patch));
  }
  updateProject(id: number, patch: ProjectPatch): Promise<WriteOutcome> {
    return this.run('PROJECT', 'UPDATE', (s) => putProject(s, id, patch));
  }
  endProject(id: number, endYear: number | null): Promise<WriteOutcome> {
    return this.run('PROJECT', 'END', (s) => {
      const project = s.get('PROJECT', id);
      if (project?.status === 'ENDED')
        return { id: null, issues: [{ field: 'status', code: 'ALREADY', params: { stateKo: '종료', stateEn: 'ended' } }] };
      return putProject(s, id, { status: 'ENDED', endYear: endYear ?? this.year() });
    });
  }
  reopenProject(id: number): Promise<WriteOutcome> {
    return this.run('PROJECT', 'REOPEN', (s) => {
      const project = s.get('PROJECT', id);
      if (project?.status === 'ACTIVE')
        return { id: null, issues: [{ field: 'status', code: 'ALREADY', params: { stateKo: '진행', stateEn: 'active' } }] };
      return putProject(s, id, { status: 'ACTIVE', endYear: null });
    });
  }
  deleteProject(id: number): Promise<WriteOutcome> {
    return this.run('PROJECT', 'DELETE', (s) => deleteProject(s, id));
  }

  private year(): number {
    return schoolYear(this.clock.timeZone, this.clock.now());
  }

  private run(entity: SchoolEntity, action: AuditAction, step: (state: SchoolState) => StepResult): Promise<WriteOutcome> {
    return withSchoolLock(this.db, async (lease) => {
      const state = await SchoolState.load(this.db);
      const result = step(state);
      if (result.issues.length > 0 || result.id === null) return { id: null, issues: result.issues, batchId: null };
      const issues = validateState(state).map(({ issue }) => issue);
      if (issues.length > 0) return { id: null, issues, batchId: null };
      const changes = state.diffs();
      const record = state.get(entity, result.id) ?? state.before(entity, result.id);
      const batchId = await commitBatch(
        this.db,
        lease,
        {
          actor: this.actor,
          action,
          summary: `${action} ${entity.toLowerCase()} #${result.id}${record ? ` ${record.name}` : ''}`,
          changes,
        },
        { now: this.clock.now(), highestIds: state.highestIds() },
      );
      return { id: result.id, issues: [], batchId };
    });
  }
}

/**
 * The problems a project's create (`id` null) or change would meet, without writing anything:
 * the same step and whole-school validation as SchoolWriter's `createProject` / `updateProject`
 * (a student's proposal is checked when made, and again when an admin accepts it: docs/decisions.md,
 * "Students propose projects; admins decide").
 */
export async function checkProject(db: Database, id: number | null, patch: ProjectPatch): Promise<readonly Issue[]> {
  const state = await SchoolState.load(db);
  const result = putProject(state, id, patch);
  if (result.issues.length > 0 || result.id === null) return result.issues;
  return validateState(state).map(({ issue }) => issue);
}

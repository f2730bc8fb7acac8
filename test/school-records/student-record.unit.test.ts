import { expect } from 'chai';
import { Kind, parse, type FieldNode, type SelectionSetNode } from 'graphql';
import { buildStudent } from '../helpers/factories.js';
import type { ClubDoc } from '../../src/data/models/club.model.js';
import { participantSummary, SUMMARY_FIELDS } from '../../src/data/school/shapes.js';
import { studentRecord } from '../../src/data/school/student-record.js';
import { CLUBS_OPERATION } from '../../src/rest/operations/clubs.js';
import { PROJECTS_OPERATION } from '../../src/rest/operations/projects.js';
import { STUDENTS_OPERATION } from '../../src/rest/operations/students.js';

/** Field names of a selection, nested ones as `parent.child`, in order. */
function namesOf(selection: SelectionSetNode | undefined, prefix = ''): string[] {
  return (selection?.selections ?? []).flatMap((node) => {
    if (node.kind !== Kind.FIELD) return [];
    const name = `${prefix}${node.name.value}`;
    return [name, ...namesOf(node.selectionSet, `${name}.`)];
  });
}

/** Keys of a record, nested objects' as `parent.child`, in order. */
function keysOf(value: Record<string, unknown>, prefix = ''): string[] {
  return Object.entries(value).flatMap(([key, inner]) => [
    `${prefix}${key}`,
    ...(inner && typeof inner === 'object' ? keysOf(inner as Record<string, unknown>, `${prefix}${key}.`) : []),
  ]);
}

describe('school records: the one Student record builder (src/data/school/student-record.ts)', () => {
  it('builds exactly the fields, in the order, of the selection GET /v1/students runs', () => {
    const operation = parse(STUDENTS_OPERATION).definitions[0];
    const list = operation?.kind === Kind.OPERATION_DEFINITION ? operation.selectionSet.selections[0] : undefined;
    const students =
      list?.kind === Kind.FIELD
        ? list.selectionSet?.selections.find((n) => n.kind === Kind.FIELD && n.name.value === 'students')
        : undefined;
    const selection = students?.kind === Kind.FIELD ? students.selectionSet : undefined;
    const club = { _id: 7, name: 'Robotics', type: 'MAJOR' } as unknown as ClubDoc;
    const record = studentRecord(buildStudent({ _id: 3, majorClubId: 7, autonomousClubId: 7 }), new Map([[7, club]]));
    expect(namesOf(selection)).to.have.length.greaterThan(10);
    expect(keysOf(record)).to.deep.equal(namesOf(selection));
    expect(record.majorClub).to.deep.equal({ id: 7, name: 'Robotics', type: 'MAJOR' });
    expect(studentRecord(buildStudent({ _id: 4, majorClubId: 99 }), new Map()).majorClub).to.equal(null);
  });

  it('the summaries (src/data/school/shapes.ts) are the selections the REST operations run', () => {
    /** The field names selected under `path` (dotted) of an operation, fragments spread in place. */
    const selected = (source: string, path: string): string[] => {
      const document = parse(source);
      const fragments = new Map(
        document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d.selectionSet] as const] : [])),
      );
      const fields = (selection: SelectionSetNode | undefined): FieldNode[] =>
        (selection?.selections ?? []).flatMap((node) =>
          node.kind === Kind.FIELD ? [node] : node.kind === Kind.FRAGMENT_SPREAD ? fields(fragments.get(node.name.value)) : [],
        );
      const operation = document.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION);
      let at = operation?.kind === Kind.OPERATION_DEFINITION ? operation.selectionSet : undefined;
      for (const name of path.split('.')) at = fields(at).find((f) => f.name.value === name)?.selectionSet;
      return fields(at).map((f) => f.name.value);
    };
    expect(selected(CLUBS_OPERATION, 'clubs.clubs.participants')).to.deep.equal([...SUMMARY_FIELDS.participant]);
    expect(selected(CLUBS_OPERATION, 'clubs.clubs.leader')).to.deep.equal([...SUMMARY_FIELDS.participant]);
    expect(selected(PROJECTS_OPERATION, 'projects.projects.participants')).to.deep.equal([...SUMMARY_FIELDS.participant]);
    expect(selected(PROJECTS_OPERATION, 'projects.projects.club')).to.deep.equal([...SUMMARY_FIELDS.club]);
    expect(selected(STUDENTS_OPERATION, 'students.students.majorClub')).to.deep.equal([...SUMMARY_FIELDS.club]);
    expect(Object.keys(participantSummary(buildStudent({ _id: 5 })))).to.deep.equal([...SUMMARY_FIELDS.participant]);
  });
});

import { expect } from 'chai';
import { Kind, parse, type FieldNode, type SelectionSetNode } from 'graphql';
import { buildStudent } from '../helpers/factories.js';
import type { ClubDoc } from '../../src/data/models/club.model.js';
import { participantSummary, SUMMARY_FIELDS } from '../../src/data/school/shapes.js';
import { studentRecord } from '../../src/data/school/student-record.js';
import { CLUBS_OPERATION } from '../../src/rest/operations/clubs.js';
import { PROJECTS_OPERATION } from '../../src/rest/operations/projects.js';
import { STUDENTS_OPERATION } from '../../src/rest/operations/students.js';

/** The fields selected under `path` (dotted) of an operation, and the reader of any selection's fields (both spread fragments in place). */
function fieldsUnder(source: string, path: string) {
  const document = parse(source);
  const fragments = new Map(
    document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d.selectionSet] as const] : [])),
  );
  const fieldsOf = (selection: SelectionSetNode | undefined): FieldNode[] =>
    (selection?.selections ?? []).flatMap((node) =>
      node.kind === Kind.FIELD ? [node] : node.kind === Kind.FRAGMENT_SPREAD ? fieldsOf(fragments.get(node.name.value)) : [],
    );
  const operation = document.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION);
  let at = operation?.kind === Kind.OPERATION_DEFINITION ? operation.selectionSet : undefined;
  for (const name of path.split('.')) at = fieldsOf(at).find((f) => f.name.value === name)?.selectionSet;
  return { fields: fieldsOf(at), fieldsOf };
}

/** The field names selected under `path` of an operation. */
const selected = (source: string, path: string): string[] => fieldsUnder(source, path).fields.map((f) => f.name.value);

/** The field names selected under `path` of an operation, nested ones as `parent.child`, in order. */
function namesUnder(source: string, path: string): string[] {
  const { fields, fieldsOf } = fieldsUnder(source, path);
  const namesOf = (nodes: readonly FieldNode[], prefix = ''): string[] =>
    nodes.flatMap((node) => {
      const name = `${prefix}${node.name.value}`;
      return [name, ...namesOf(fieldsOf(node.selectionSet), `${name}.`)];
    });
  return namesOf(fields);
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
    const names = namesUnder(STUDENTS_OPERATION, 'students.students');
    const club = { _id: 7, name: 'Robotics', type: 'MAJOR' } as unknown as ClubDoc;
    const record = studentRecord(buildStudent({ _id: 3, majorClubId: 7, autonomousClubId: 7 }), new Map([[7, club]]));
    expect(names).to.have.length.greaterThan(10);
    expect(keysOf(record)).to.deep.equal(names);
    expect(record.majorClub).to.deep.equal({ id: 7, name: 'Robotics', type: 'MAJOR' });
    expect(studentRecord(buildStudent({ _id: 4, majorClubId: 99 }), new Map()).majorClub).to.equal(null);
  });

  it('the summaries (src/data/school/shapes.ts) are the selections the REST operations run', () => {
    expect(selected(CLUBS_OPERATION, 'clubs.clubs.participants')).to.deep.equal([...SUMMARY_FIELDS.participant]);
    expect(selected(CLUBS_OPERATION, 'clubs.clubs.leader')).to.deep.equal([...SUMMARY_FIELDS.participant]);
    expect(selected(PROJECTS_OPERATION, 'projects.projects.participants')).to.deep.equal([...SUMMARY_FIELDS.participant]);
    expect(selected(PROJECTS_OPERATION, 'projects.projects.club')).to.deep.equal([...SUMMARY_FIELDS.club]);
    expect(selected(STUDENTS_OPERATION, 'students.students.majorClub')).to.deep.equal([...SUMMARY_FIELDS.club]);
    expect(Object.keys(participantSummary(buildStudent({ _id: 5 })))).to.deep.equal([...SUMMARY_FIELDS.participant]);
  });
});

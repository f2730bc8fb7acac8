import { expect } from 'chai';
import { Kind, parse, type SelectionSetNode } from 'graphql';
import { buildStudent } from '../helpers/factories.js';
import type { ClubDoc } from '../../src/data/models/club.model.js';
import { studentRecord } from '../../src/data/school/student-record.js';
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

describe('the one Student record builder (src/data/school/student-record.ts)', () => {
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
});

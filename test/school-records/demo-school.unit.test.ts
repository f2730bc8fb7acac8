import { expect } from 'chai';
import { clubIssues, projectIssues, studentIssues } from '../../src/data/school/rules.js';
import { SchoolState } from '../../src/data/school/state.js';
import { buildDemoSchool, buildDemoSchoolOfSize, type DemoSchool } from '../../src/data/school/demo.js';

/**
 * The demo schools `campus seed --demo [--students N]` loads (a bigger school for the benchmarks): the
 * sizes asked, deterministic, and every record valid under the school's own rules (src/data/school/rules.ts),
 * so the admin console and imports can work on them as on a real school's data.
 */
/** Every record checked as the admin console checks a new one. */
function issuesOf(school: DemoSchool): string[] {
  const state = SchoolState.of(school);
  return [
    ...school.students.flatMap((s) => studentIssues(state, s, null).map((i) => `student ${s._id} ${JSON.stringify(i)}`)),
    ...school.clubs.flatMap((c) => clubIssues(state, c, null).map((i) => `club ${c._id} ${JSON.stringify(i)}`)),
    ...school.projects.flatMap((p) => projectIssues(state, p, null).map((i) => `project ${p._id} ${JSON.stringify(i)}`)),
  ];
}

/** The one rule the demo breaks on purpose: a club whose recorded leader graduated reads a null leader (docs/spec.md). */
const GRADUATE_LEADER = 'club 108 {"field":"leader","code":"NOT_ENROLLED","params":{"student":"오소율 (GRADUATE)"}}';

describe('school records: demo schools of a chosen size', () => {
  it('the default school passes every rule of school records but the graduate leader it shows on purpose', () => {
    expect(issuesOf(buildDemoSchool())).to.deep.equal([GRADUATE_LEADER]);
  });

  it('2,000 students: the default school first, then alumni, abolished clubs and ended projects in proportion, all valid', () => {
    const base = buildDemoSchool();
    const school = buildDemoSchoolOfSize(2000);
    expect(school.students).to.have.length(2000);
    expect(school.students.slice(0, base.students.length)).to.deep.equal(base.students);
    expect(new Set(school.students.map((s) => s.email)).size).to.equal(2000);
    expect(
      school.students.slice(base.students.length).every((s) => s.grade === null && ['GRADUATE', 'WITHDRAWN'].includes(s.role)),
    ).to.equal(true);
    // 16 clubs and 24 projects per 228 students.
    expect(school.clubs).to.have.length(base.clubs.length + Math.round((1772 * 16) / 228));
    expect(school.projects).to.have.length(base.projects.length + Math.round((1772 * 24) / 228));
    expect(issuesOf(school)).to.deep.equal([GRADUATE_LEADER]);
  });

  it('is deterministic, and a size below the default keeps its first students with consistent clubs and projects', () => {
    expect(buildDemoSchoolOfSize(5000)).to.deep.equal(buildDemoSchoolOfSize(5000));
    const small = buildDemoSchoolOfSize(100);
    expect(small.students.map((s) => s._id)).to.deep.equal(Array.from({ length: 100 }, (_, i) => i + 1));
    expect(issuesOf(small)).to.deep.equal([]);
  });
});

import type { Database } from '../database.js';
import { isEnrolledRole } from '../models/student.model.js';
import { readSettled } from './engine.js';
import { SchoolState } from './state.js';

export interface SchoolCounts {
  enrolled: number;
  grade1: number;
  grade2: number;
  grade3: number;
  graduates: number;
  withdrawn: number;
  activeClubs: number;
  abolishedClubs: number;
  activeProjects: number;
  endedProjects: number;
}

/** How many students, clubs and projects there are, by state (the admin home). */
export async function schoolCounts(db: Database): Promise<SchoolCounts> {
  const state = await readSettled(db, () => SchoolState.load(db));
  const counts: SchoolCounts = {
    enrolled: 0,
    grade1: 0,
    grade2: 0,
    grade3: 0,
    graduates: 0,
    withdrawn: 0,
    activeClubs: 0,
    abolishedClubs: 0,
    activeProjects: 0,
    endedProjects: 0,
  };
  for (const s of state.all('STUDENT')) {
    if (s.role === 'GRADUATE') counts.graduates += 1;
    else if (s.role === 'WITHDRAWN') counts.withdrawn += 1;
    if (!isEnrolledRole(s.role)) continue;
    counts.enrolled += 1;
    if (s.grade === 1) counts.grade1 += 1;
    else if (s.grade === 2) counts.grade2 += 1;
    else if (s.grade === 3) counts.grade3 += 1;
  }
  for (const c of state.all('CLUB')) {
    if (c.status === 'ABOLISHED') counts.abolishedClubs += 1;
    else counts.activeClubs += 1;
  }
  for (const p of state.all('PROJECT')) {
    if (p.status === 'ENDED') counts.endedProjects += 1;
    else counts.activeProjects += 1;
  }
  return counts;
}

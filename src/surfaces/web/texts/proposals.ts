import type { ProposalState } from '../../../data/school/proposals.js';

/*
 * Project proposals, Korean and English: a student's /console/projects and the admins'
 * /admin/proposals (src/surfaces/console/projects.ts, src/surfaces/admin/proposals.ts). Kept apart
 * from ko.ts / en.ts, which include them as `console.projects` and `admin.proposals`.
 */

const n = (value: number, locale: string) => value.toLocaleString(locale);

export const consoleProjectsKo = {
  title: '프로젝트',
  intro:
    '참여하는 프로젝트를 보고, 새 프로젝트나 바꿀 점을 제안합니다. 관리자가 수락하면 학교 데이터에 바로 반영되고, 거절하면 그 이유가 여기에 보입니다.',
  notStudent: '프로젝트 제안은 학생만 할 수 있습니다 (이 계정의 이메일과 같은 학생이 없습니다).',
  mine: '내 프로젝트',
  none: '참여하는 프로젝트가 없습니다.',
  columns: ['이름', '동아리', '상태', '연도', '참여 인원', '제안'],
  proposeChange: '변경 제안',
  proposeChangeLabel: (name: string) => `${name} 변경 제안`,
  proposeNew: '새 프로젝트 제안',
  proposals: '내 제안',
  noProposals: '아직 제안이 없습니다.',
  proposalColumns: ['제안한 때', '무엇', '상태', '결과'],
  newWhat: (name: string) => `새 프로젝트: ${name}`,
  changeWhat: (name: string) => `변경: ${name}`,
  accepted: (id: number) => `반영됨 (프로젝트 #${id})`,
  refused: (reason: string) => `이유: ${reason}`,
  waiting: '관리자 검토 중',
  newTitle: '새 프로젝트 제안',
  changeTitle: (name: string) => `변경 제안: ${name}`,
  formIntro: '관리자 콘솔의 프로젝트 양식과 같은 규칙으로 확인합니다. 새 프로젝트에는 내가 참여자로 들어갑니다.',
  note: '관리자에게 남길 말 (선택)',
  noteHint: '왜 만들거나 바꾸는지 (500자까지).',
  noteTooLong: '남길 말은 500자까지입니다.',
  submit: '제안 보내기',
  back: '내 프로젝트',
  sent: '제안을 보냈습니다. 관리자가 검토하면 여기에 결과가 보입니다.',
  pendingCap: (max: number, pending: number) =>
    `검토를 기다리는 제안은 한 번에 ${n(max, 'ko-KR')}개까지 둘 수 있습니다 (지금 ${n(pending, 'ko-KR')}개).`,
  tooManyPending: (max: number) =>
    `검토를 기다리는 제안이 이미 ${n(max, 'ko-KR')}개입니다 (한 번에 ${n(max, 'ko-KR')}개까지). 관리자가 하나를 수락하거나 거절한 뒤 보내세요.`,
};

export const consoleProjectsEn: typeof consoleProjectsKo = {
  title: 'Projects',
  intro:
    'See the projects you take part in, and propose a new project or a change. An administrator who accepts it writes it into the school data at once; a refusal shows here with its reason.',
  notStudent: 'Only students propose projects (no student has the email of this account).',
  mine: 'My projects',
  none: 'You take part in no project.',
  columns: ['Name', 'Club', 'Status', 'Years', 'Participants', 'Propose'],
  proposeChange: 'Propose a change',
  proposeChangeLabel: (name: string) => `Propose a change to ${name}`,
  proposeNew: 'Propose a new project',
  proposals: 'My proposals',
  noProposals: 'No proposals yet.',
  proposalColumns: ['Proposed', 'What', 'State', 'Outcome'],
  newWhat: (name: string) => `New project: ${name}`,
  changeWhat: (name: string) => `Change: ${name}`,
  accepted: (id: number) => `Written (project #${id})`,
  refused: (reason: string) => `Reason: ${reason}`,
  waiting: 'Waiting for an administrator',
  newTitle: 'Propose a new project',
  changeTitle: (name: string) => `Propose a change: ${name}`,
  formIntro: "Checked with the admin console's project form rules. You are among a new project's participants.",
  note: 'A note to the administrators (optional)',
  noteHint: 'Why to make or change it (up to 500 characters).',
  noteTooLong: 'The note is at most 500 characters.',
  submit: 'Send the proposal',
  back: 'My projects',
  sent: 'Proposal sent. Its outcome shows here once an administrator has looked at it.',
  pendingCap: (max: number, pending: number) =>
    `At most ${n(max, 'en-US')} of your proposals can wait for a decision at once (${n(pending, 'en-US')} waiting now).`,
  tooManyPending: (max: number) =>
    `You already have ${n(max, 'en-US')} proposals waiting for a decision (the most at once). Send this one after an administrator has accepted or refused one.`,
};

export const adminProposalsKo = {
  title: '프로젝트 제안',
  intro:
    '학생이 보낸 새 프로젝트와 프로젝트 변경 제안입니다. 수락하면 관리자 양식과 같은 규칙으로 확인해 바로 반영하고(변경 기록에 남음), 거절하면 이유를 학생이 봅니다.',
  state: '상태',
  count: (count: number) => `제안 ${n(count, 'ko-KR')}건`,
  waiting: (count: number) => `검토를 기다리는 프로젝트 제안 ${n(count, 'ko-KR')}건`,
  review: '제안 보기',
  none: '제안이 없습니다.',
  columns: ['제안한 때', '학생', '무엇', '상태'],
  states: { PENDING: '검토 대기', ACCEPTED: '수락됨', REFUSED: '거절됨' } satisfies Record<ProposalState, string>,
  newWhat: (name: string) => `새 프로젝트: ${name}`,
  changeWhat: (id: number, name: string) => `#${id} 변경: ${name}`,
  detailTitle: (name: string) => `제안: ${name}`,
  back: '제안 목록',
  note: '학생이 남긴 말',
  compare: '지금 기록과 제안',
  field: '항목',
  current: '지금',
  proposed: '제안',
  changed: '바뀜',
  newRecord: '(새 프로젝트)',
  accept: '수락하고 반영',
  acceptHint: '관리자 프로젝트 양식과 같은 규칙으로 확인한 뒤 반영합니다. 규칙에 맞지 않으면 반영하지 않고 이유를 보여 줍니다.',
  refuse: '거절',
  reason: '거절 이유 (학생이 봅니다)',
  reasonMissing: '거절 이유를 적으세요.',
  reasonTooLong: '거절 이유는 500자까지입니다.',
  decided: (state: string, who: string) => `${state} · ${who}`,
  acceptedDone: (id: number) => `제안을 수락해 프로젝트 #${id}에 반영했습니다.`,
  refusedDone: '제안을 거절했습니다. 학생이 이유를 봅니다.',
  alreadyDecided: '이미 결정된 제안입니다.',
  project: (id: number) => `프로젝트 #${id} 보기`,
};

export const adminProposalsEn: typeof adminProposalsKo = {
  title: 'Project proposals',
  intro:
    "Students' proposals of new projects and of changes to theirs. Accepting checks one with the admin form's rules and writes it at once (in the audit log); refusing shows the student your reason.",
  state: 'State',
  count: (count: number) => `${n(count, 'en-US')} proposal${count === 1 ? '' : 's'}`,
  waiting: (count: number) => `${n(count, 'en-US')} project proposal${count === 1 ? ' waits' : 's wait'} for review`,
  review: 'Review them',
  none: 'No proposals.',
  columns: ['Proposed', 'Student', 'What', 'State'],
  states: { PENDING: 'Waiting', ACCEPTED: 'Accepted', REFUSED: 'Refused' } satisfies Record<ProposalState, string>,
  newWhat: (name: string) => `New project: ${name}`,
  changeWhat: (id: number, name: string) => `Change of #${id}: ${name}`,
  detailTitle: (name: string) => `Proposal: ${name}`,
  back: 'Proposals',
  note: "The student's note",
  compare: 'The record now and the proposal',
  field: 'Field',
  current: 'Now',
  proposed: 'Proposed',
  changed: 'changed',
  newRecord: '(a new project)',
  accept: 'Accept and write',
  acceptHint: "Checked with the admin project form's rules, then written. If a rule refuses it, nothing is written and the page says why.",
  refuse: 'Refuse',
  reason: 'Why (the student reads it)',
  reasonMissing: 'Write why you refuse it.',
  reasonTooLong: 'The reason is at most 500 characters.',
  decided: (state: string, who: string) => `${state} · ${who}`,
  acceptedDone: (id: number) => `Proposal accepted and written to project #${id}.`,
  refusedDone: 'Proposal refused; the student reads your reason.',
  alreadyDecided: 'This proposal was decided already.',
  project: (id: number) => `Open project #${id}`,
};

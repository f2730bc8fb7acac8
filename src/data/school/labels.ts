import type {
  AuditAction,
  AuditStatus,
  ClubStatus,
  ClubType,
  Major,
  ProjectStatus,
  RecordOperation,
  SchoolEntity,
  Sex,
  StudentRole,
} from '../__generated__/enums.js';

/** The languages of the consoles and of the messages (Korean first). */
export type Lang = 'ko' | 'en';

type Labels<T extends string> = Readonly<Record<T, { readonly ko: string; readonly en: string }>>;

/**
 * How each enum value is written for people: in the consoles and in the spreadsheets (the
 * Korean labels are the original system's, e.g. SW개발과, 기숙사자치위원회, 남자; imports accept
 * either language and the enum names).
 */
export const SEX_LABELS: Labels<Sex> = { MAN: { ko: '남자', en: 'Man' }, WOMAN: { ko: '여자', en: 'Woman' } };

export const MAJOR_LABELS: Labels<Major> = {
  SW_DEVELOPMENT: { ko: 'SW개발과', en: 'Software development' },
  SMART_IOT: { ko: '스마트IoT과', en: 'Smart IoT' },
  AI: { ko: '인공지능과', en: 'AI' },
};

export const ROLE_LABELS: Labels<StudentRole> = {
  STUDENT_COUNCIL: { ko: '학생회', en: 'Student council' },
  DORMITORY_MANAGER: { ko: '기숙사자치위원회', en: 'Dormitory committee' },
  GENERAL_STUDENT: { ko: '일반학생', en: 'General student' },
  GRADUATE: { ko: '졸업생', en: 'Graduate' },
  WITHDRAWN: { ko: '자퇴생', en: 'Withdrawn' },
};

export const CLUB_TYPE_LABELS: Labels<ClubType> = {
  MAJOR_CLUB: { ko: '전공동아리', en: 'Major club' },
  AUTONOMOUS_CLUB: { ko: '창체동아리', en: 'Autonomous club' },
};

export const CLUB_STATUS_LABELS: Labels<ClubStatus> = { ACTIVE: { ko: '활동', en: 'Active' }, ABOLISHED: { ko: '폐지', en: 'Abolished' } };

export const PROJECT_STATUS_LABELS: Labels<ProjectStatus> = { ACTIVE: { ko: '진행', en: 'Active' }, ENDED: { ko: '종료', en: 'Ended' } };

export const ENTITY_LABELS: Labels<SchoolEntity> = {
  STUDENT: { ko: '학생', en: 'Student' },
  CLUB: { ko: '동아리', en: 'Club' },
  PROJECT: { ko: '프로젝트', en: 'Project' },
};

export const ACTION_LABELS: Labels<AuditAction> = {
  CREATE: { ko: '추가', en: 'Create' },
  UPDATE: { ko: '수정', en: 'Update' },
  DELETE: { ko: '삭제', en: 'Delete' },
  GRADUATE: { ko: '졸업 처리', en: 'Graduate' },
  WITHDRAW: { ko: '자퇴 처리', en: 'Withdraw' },
  REACTIVATE: { ko: '재학 복귀', en: 'Reactivate' },
  ABOLISH: { ko: '폐지', en: 'Abolish' },
  END: { ko: '종료', en: 'End' },
  REOPEN: { ko: '재개', en: 'Reopen' },
  IMPORT: { ko: '가져오기', en: 'Import' },
  ROLLOVER: { ko: '학년도 전환', en: 'Rollover' },
  UNDO: { ko: '되돌리기', en: 'Undo' },
  RESET: { ko: '데모 학교로 초기화', en: 'Reset to the demo school' },
};

export const OPERATION_LABELS: Labels<RecordOperation> = {
  CREATE: { ko: '추가', en: 'Created' },
  UPDATE: { ko: '수정', en: 'Updated' },
  DELETE: { ko: '삭제', en: 'Removed' },
  UNCHANGED: { ko: '변경 없음', en: 'Unchanged' },
};

export const STATUS_LABELS: Labels<AuditStatus> = {
  APPLYING: { ko: '적용 중', en: 'Applying' },
  APPLIED: { ko: '적용됨', en: 'Applied' },
  ROLLED_BACK: { ko: '취소됨(실패)', en: 'Rolled back' },
  UNDONE: { ko: '되돌려짐', en: 'Undone' },
  SUPERSEDED: { ko: '초기화로 대체됨', en: 'Superseded by a reset' },
};

/** Labels of record fields, for messages and forms (a file's own header wins in import messages). */
export const FIELD_LABELS: Readonly<Record<string, { readonly ko: string; readonly en: string }>> = {
  id: { ko: 'ID', en: 'ID' },
  name: { ko: '이름', en: 'name' },
  email: { ko: '이메일', en: 'email' },
  sex: { ko: '성별', en: 'sex' },
  grade: { ko: '학년', en: 'grade' },
  classNum: { ko: '반', en: 'class' },
  number: { ko: '번호', en: 'number' },
  studentNumber: { ko: '학번', en: 'student number' },
  major: { ko: '학과', en: 'major' },
  role: { ko: '소속', en: 'role' },
  dormitoryRoom: { ko: '호실', en: 'dormitory room' },
  dormitoryFloor: { ko: '층', en: 'dormitory floor' },
  majorClubId: { ko: '전공동아리', en: 'major club' },
  autonomousClubId: { ko: '창체동아리', en: 'autonomous club' },
  specialty: { ko: '전문분야', en: 'specialty' },
  githubId: { ko: 'GitHub 아이디', en: 'GitHub id' },
  githubUrl: { ko: 'GitHub 주소', en: 'GitHub URL' },
  type: { ko: '종류', en: 'type' },
  leader: { ko: '부장', en: 'leader' },
  leaderId: { ko: '부장', en: 'leader' },
  members: { ko: '부원', en: 'members' },
  status: { ko: '상태', en: 'status' },
  foundedYear: { ko: '설립연도', en: 'founded year' },
  abolishedYear: { ko: '폐지연도', en: 'abolished year' },
  description: { ko: '설명', en: 'description' },
  clubId: { ko: '동아리', en: 'club' },
  club: { ko: '동아리', en: 'club' },
  participants: { ko: '참여자', en: 'participants' },
  participantIds: { ko: '참여자', en: 'participants' },
  startYear: { ko: '시작연도', en: 'start year' },
  endYear: { ko: '종료연도', en: 'end year' },
  file: { ko: '파일', en: 'file' },
  record: { ko: '레코드', en: 'record' },
};

/** The label of a field in `lang` (the field's own name when it has none). */
export function fieldLabel(field: string, lang: Lang): string {
  return FIELD_LABELS[field]?.[lang] ?? field;
}

/** The label of an enum value in `lang`, or the value itself when it is not one of `labels`. */
export function labelOf<T extends string>(labels: Labels<T>, value: string | null | undefined, lang: Lang): string {
  if (value == null) return '';
  return (labels as Record<string, { ko: string; en: string } | undefined>)[value]?.[lang] ?? value;
}

import { CLUB_TYPE_LABELS, ENTITY_LABELS, fieldLabel, labelOf, type Lang } from './labels.js';
import type { Issue, IssueCode } from './types.js';

type Params = Readonly<Record<string, string | number>>;
type Text = (p: Params, lang: Lang) => string;

const p = (params: Params, name: string): string => String(params[name] ?? '');

/**
 * Every issue's message, in Korean and English. A message is "<field label>: <what is wrong>",
 * so it names the field (or the file's own column header in an import).
 */
const MESSAGES: Readonly<Record<IssueCode, { readonly ko: Text; readonly en: Text }>> = {
  REQUIRED: { ko: () => '필수 항목입니다', en: () => 'is required' },
  LENGTH: {
    ko: (q) =>
      (Number(q['min']) > 0 ? `${p(q, 'min')}~${p(q, 'max')}자여야 합니다` : `${p(q, 'max')}자 이하여야 합니다`) +
      ` (지금 ${p(q, 'got')}자)`,
    en: (q) =>
      (Number(q['min']) > 0 ? `must be ${p(q, 'min')} to ${p(q, 'max')} characters` : `must be at most ${p(q, 'max')} characters`) +
      ` (got ${p(q, 'got')})`,
  },
  RANGE: {
    ko: (q) => `${p(q, 'min')}~${p(q, 'max')} 사이의 정수여야 합니다 (입력: ${p(q, 'got')})`,
    en: (q) => `must be an integer from ${p(q, 'min')} to ${p(q, 'max')} (got ${p(q, 'got')})`,
  },
  NOT_INTEGER: { ko: (q) => `정수여야 합니다 (입력: '${p(q, 'got')}')`, en: (q) => `must be a whole number (got '${p(q, 'got')}')` },
  STUDENT_NUMBER: {
    ko: (q) => `학년·반·두 자리 번호로 된 네 자리 학번이어야 합니다, 예: 1101 (입력: '${p(q, 'got')}')`,
    en: (q) => `must be a four-digit student number (grade, class, two-digit number), e.g. 1101 (got '${p(q, 'got')}')`,
  },
  ONE_OF: {
    ko: (q) => `${p(q, 'allowed')} 중 하나여야 합니다 (입력: '${p(q, 'got')}')`,
    en: (q) => `must be one of ${p(q, 'allowed')} (got '${p(q, 'got')}')`,
  },
  EMAIL: {
    ko: (q) => `name@school.kr 형식의 이메일 주소여야 합니다 (입력: '${p(q, 'got')}')`,
    en: (q) => `must be an email address such as name@school.kr (got '${p(q, 'got')}')`,
  },
  TAKEN: {
    ko: (q) => `'${p(q, 'value')}'은(는) 이미 ${p(q, 'by')}에서 쓰고 있습니다`,
    en: (q) => `'${p(q, 'value')}' is already used by ${p(q, 'by')}`,
  },
  SEAT_TAKEN: {
    ko: (q) => `학번 ${p(q, 'seat')}은(는) 이미 ${p(q, 'by')}의 학번입니다`,
    en: (q) => `student number ${p(q, 'seat')} is already ${p(q, 'by')}'s`,
  },
  GITHUB_ID: {
    ko: (q) => `GitHub 아이디 형식이 아닙니다: 영문자, 숫자, 하이픈(연속·처음·끝 제외)으로 39자 이하 (입력: '${p(q, 'got')}')`,
    en: (q) =>
      `must be a GitHub username: letters, digits and single hyphens, not first or last, at most 39 characters (got '${p(q, 'got')}')`,
  },
  UNKNOWN_STUDENT: {
    ko: (q) => `'${p(q, 'ref')}'에 해당하는 학생이 없습니다 (이메일, 네 자리 학번 또는 #id로 적으세요)`,
    en: (q) => `no student is '${p(q, 'ref')}' (name one by email, four-digit student number or #id)`,
  },
  AMBIGUOUS_STUDENT: {
    ko: (q) => `'${p(q, 'ref')}'에 해당하는 학생이 여럿입니다; 이메일로 적으세요`,
    en: (q) => `'${p(q, 'ref')}' matches several students; use the email`,
  },
  UNKNOWN_CLUB: { ko: (q) => `'${p(q, 'ref')}' 동아리가 없습니다`, en: (q) => `no club is '${p(q, 'ref')}'` },
  CLUB_TYPE: {
    ko: (q) => `${p(q, 'club')}은(는) ${labelOf(CLUB_TYPE_LABELS, p(q, 'expected'), 'ko')}가 아닙니다`,
    en: (q) => `${p(q, 'club')} is not a ${labelOf(CLUB_TYPE_LABELS, p(q, 'expected'), 'en').toLowerCase()}`,
  },
  CLUB_ABOLISHED: { ko: (q) => `${p(q, 'club')}은(는) 폐지된 동아리입니다`, en: (q) => `${p(q, 'club')} is abolished` },
  NOT_ENROLLED: {
    ko: (q) => `${p(q, 'student')}은(는) 재학생이 아닙니다 (졸업 또는 자퇴)`,
    en: (q) => `${p(q, 'student')} is not enrolled (graduated or withdrawn)`,
  },
  ENROLLED_ONLY: {
    ko: () => '졸업하거나 자퇴한 학생에게는 학년, 반, 번호, 학과, 호실, 동아리가 없습니다',
    en: () => 'graduated and withdrawn students have no grade, class, number, major, dormitory room or club',
  },
  LEADS_ANOTHER: {
    ko: (q) => `${p(q, 'student')}은(는) 이미 같은 종류의 동아리 ${p(q, 'club')}의 부장입니다`,
    en: (q) => `${p(q, 'student')} already leads ${p(q, 'club')}, a club of the same type`,
  },
  ABOLISHED_LEADER: { ko: () => '폐지된 동아리에는 부장이 없어야 합니다', en: () => 'an abolished club has no leader' },
  ABOLISHED_MEMBERS: { ko: () => '폐지된 동아리에는 부원이 없어야 합니다', en: () => 'an abolished club has no members' },
  END_YEAR_REQUIRED: { ko: () => '종료된 프로젝트에는 종료연도가 필요합니다', en: () => 'is required when the project has ended' },
  END_BEFORE_START: {
    ko: (q) => `시작연도(${p(q, 'start')})보다 앞설 수 없습니다 (입력: ${p(q, 'got')})`,
    en: (q) => `must not be before the start year ${p(q, 'start')} (got ${p(q, 'got')})`,
  },
  END_WHILE_ACTIVE: { ko: () => '진행 중인 프로젝트에는 종료연도가 없어야 합니다', en: () => 'must be empty while the project is active' },
  RETIRED_ROLE: {
    ko: () => '졸업과 자퇴는 졸업 처리·자퇴 처리로 합니다',
    en: () => 'graduating and withdrawing are their own actions (graduateStudent, withdrawStudent)',
  },
  NOT_FOUND: {
    ko: (q) => `ID ${p(q, 'id')}인 ${labelOf(ENTITY_LABELS, p(q, 'entity'), 'ko')}이(가) 없습니다`,
    en: (q) => `no ${labelOf(ENTITY_LABELS, p(q, 'entity'), 'en').toLowerCase()} has the id ${p(q, 'id')}`,
  },
  ALREADY: { ko: (q) => `이미 ${p(q, 'stateKo')} 상태입니다`, en: (q) => `is already ${p(q, 'stateEn')}` },
  HEADER_UNKNOWN: {
    ko: (q) => `알 수 없는 열 '${p(q, 'got')}'; 쓸 수 있는 열: ${p(q, 'allowed')}`,
    en: (q) => `unknown column '${p(q, 'got')}'; the columns are: ${p(q, 'allowed')}`,
  },
  HEADER_DUPLICATE: { ko: (q) => `'${p(q, 'got')}' 열이 두 번 있습니다`, en: (q) => `the column '${p(q, 'got')}' appears twice` },
  HEADER_MISSING: {
    ko: (q) => `열이 빠졌습니다: ${p(q, 'needed')} 중 하나가 있어야 합니다`,
    en: (q) => `a column is missing: the file needs ${p(q, 'needed')}`,
  },
  HEADER_EMPTY: { ko: () => '첫 행에 열 이름이 있어야 합니다', en: () => 'the first row must hold the column names' },
  DUPLICATE_IN_FILE: {
    ko: (q) => `'${p(q, 'value')}'은(는) 이 파일의 ${p(q, 'first')}행에도 있습니다`,
    en: (q) => `'${p(q, 'value')}' is also in row ${p(q, 'first')} of this file`,
  },
  UNKNOWN_ID: {
    ko: (q) => `ID ${p(q, 'id')}인 레코드가 없습니다; 새로 추가하려면 ID를 비워 두세요`,
    en: (q) => `no record has the ID ${p(q, 'id')}; leave the ID empty to add a new one`,
  },
  FORMULA_NO_RESULT: {
    ko: (q) =>
      `수식(=${p(q, 'formula')})에 저장된 결과값이 없습니다. 수식은 계산하지 않습니다: 스프레드시트 프로그램에서 열어 저장하거나 값을 직접 입력하세요`,
    en: (q) =>
      `the cell holds the formula =${p(q, 'formula')} without a saved result; formulas are never evaluated: open and save the file in a spreadsheet program, or type the value`,
  },
  CELL_ERROR: { ko: (q) => `셀에 오류 값 ${p(q, 'got')}이(가) 있습니다`, en: (q) => `the cell holds the error ${p(q, 'got')}` },
  SHEET_GRADE: {
    ko: (q) => `학번 ${p(q, 'got')}은(는) '${p(q, 'sheet')}' 시트의 학년과 맞지 않습니다`,
    en: (q) => `student number ${p(q, 'got')} does not belong on the sheet '${p(q, 'sheet')}'`,
  },
  TOO_LARGE: {
    ko: (q) => `파일이 너무 큽니다: ${p(q, 'size')} (최대 ${p(q, 'max')})`,
    en: (q) => `the file is too large: ${p(q, 'size')} (at most ${p(q, 'max')})`,
  },
  TOO_MANY_ROWS: {
    ko: (q) => `행이 너무 많습니다: ${p(q, 'rows')}행 (최대 ${p(q, 'max')}행)`,
    en: (q) => `the file has too many rows: ${p(q, 'rows')} (at most ${p(q, 'max')})`,
  },
  NOT_SPREADSHEET: {
    ko: () => '스프레드시트 파일이 아닙니다: .xlsx 통합 문서나 .csv 텍스트 파일이어야 합니다 (파일 이름이 아니라 내용으로 확인합니다)',
    en: () => 'the file is not a spreadsheet: an .xlsx workbook or a .csv text file is expected (its content is checked, not its name)',
  },
  OLD_EXCEL: {
    ko: () => 'Excel 97-2003 통합 문서(.xls)입니다. .xlsx로 저장해서 올리세요',
    en: () => 'the file is an Excel 97-2003 workbook (.xls); save it as .xlsx and upload that',
  },
  UNREADABLE: {
    ko: (q) => `${p(q, 'format')} 파일로 읽을 수 없습니다: ${p(q, 'detail')}`,
    en: (q) => `the file could not be read as ${p(q, 'format')}: ${p(q, 'detail')}`,
  },
  UNPACKS_TOO_LARGE: {
    ko: (q) =>
      `압축을 풀면 너무 큽니다: ${p(q, 'entry')}이(가) 한도를 넘었습니다 (항목 하나 최대 ${p(q, 'maxEntry')}, 전체 최대 ${p(q, 'maxTotal')}); 스프레드시트 프로그램에서 다시 저장해서 올리세요`,
    en: (q) =>
      `the workbook unpacks to too much: ${p(q, 'entry')} went past the limit (at most ${p(q, 'maxEntry')} an entry, ${p(q, 'maxTotal')} in all); save it again from a spreadsheet program and upload that`,
  },
  TOO_WIDE: {
    ko: (q) =>
      `시트가 너무 넓습니다: ${p(q, 'last')} 열까지 쓰였습니다 (최대 ${p(q, 'max')}열, ${p(q, 'lastMax')} 열까지); 표 오른쪽의 셀을 지우고 다시 올리세요`,
    en: (q) =>
      `a sheet is too wide: it uses columns up to ${p(q, 'last')} (at most ${p(q, 'max')} columns, up to ${p(q, 'lastMax')}); delete the cells to the right of the table and upload it again`,
  },
  READ_LIMIT: {
    ko: (q) => `파일을 읽는 데 한도(메모리 ${p(q, 'memory')}, ${p(q, 'seconds')}초)를 넘었습니다; 행이나 시트를 나누어 올리세요`,
    en: (q) =>
      `reading the file went past its limits (${p(q, 'memory')} of memory, ${p(q, 'seconds')} s); split its rows or sheets into smaller files`,
  },
  EMPTY_FILE: { ko: () => '파일에 행이 없습니다', en: () => 'the file has no rows' },
  JOB_CLUB: {
    ko: () => '취업동아리는 이 서비스에서 관리하지 않습니다; 이 열을 비우거나 지우세요',
    en: () => 'job clubs are not kept by this service; leave the column empty or remove it',
  },
  ROLLOVER_NOT_MOVING: {
    ko: (q) => `${p(q, 'student')}은(는) ${p(q, 'stateKo')}입니다: 새 반과 번호는 1·2학년 재학생만 받습니다`,
    en: (q) => `${p(q, 'student')} is ${p(q, 'stateEn')}: only enrolled grade 1 and 2 students get a new class and number`,
  },
  ROLLOVER_GRADE: {
    ko: (q) => `새 학년은 ${p(q, 'expected')}이어야 합니다 (입력: ${p(q, 'got')})`,
    en: (q) => `the new grade must be ${p(q, 'expected')} (got ${p(q, 'got')})`,
  },
  SUPERSEDED: {
    ko: (q) =>
      `${p(q, 'at')}에 학교 데이터 전체가 데모 학교로 초기화되어(campus seed --demo --reset) 이 변경은 대체되었습니다; 되돌릴 수 없습니다`,
    en: (q) =>
      `was superseded when the whole school was reset to the demo school on ${p(q, 'at')} (campus seed --demo --reset); it cannot be undone`,
  },
  RESET_FINAL: {
    ko: () => '초기화는 되돌릴 수 없습니다; 이전 데이터는 백업에서 복원하세요 (campus restore)',
    en: () => 'a reset cannot be undone; restore the earlier data from a backup (campus restore)',
  },
  CHANGED_SINCE: {
    ko: (q) => `${p(q, 'label')}이(가) 그 뒤에 바뀌었습니다; 되돌릴 수 없습니다`,
    en: (q) => `${p(q, 'label')} changed after this change, so it cannot be undone`,
  },
  UPLOAD_GONE: {
    ko: () => '올린 파일이 더 이상 없습니다 (한 시간까지 보관). 다시 올리세요',
    en: () => 'the uploaded file is no longer kept (an hour at most); upload it again',
  },
  CONCURRENT: {
    ko: () => '다른 변경을 기록하는 중입니다. 잠시 뒤 다시 시도하세요',
    en: () => 'another change is being written; try again in a moment',
  },
};

/** The message of an issue in `lang`, led by the field's label (or `label`, e.g. a file's column header). */
export function issueMessage(issue: Pick<Issue, 'code' | 'params'> & { field: string | null }, lang: Lang, label?: string | null): string {
  const text = MESSAGES[issue.code][lang](issue.params ?? {}, lang);
  const name = label ?? (issue.field ? fieldLabel(issue.field, lang) : null);
  return name ? `${name}: ${text}` : text;
}

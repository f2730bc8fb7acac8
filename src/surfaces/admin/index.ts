import type { RouteTable } from '../web/routes.js';
import type { Web } from '../web/web.js';
import {
  accountDetail,
  accountList,
  changeRole,
  decideTeacher,
  deleteAccount,
  removePasskeys,
  sendReset,
  setDisabled,
} from './accounts.js';
import { appRegistry, changeApp } from './apps.js';
import { auditExport, auditList, auditUndo } from './audit.js';
import { abolishClub, clubDetail, clubList, createClub, deleteClub, newClub, updateClub } from './clubs.js';
import type { AdminDeps } from './deps.js';
import { adminHome } from './home.js';
import { jobPage } from './jobs.js';
import { decideKeyScopes, keyList, renewKey, revokeKey } from './keys.js';
import {
  createProject,
  deleteProject,
  endProject,
  newProject,
  projectDetail,
  projectList,
  reopenProject,
  updateProject,
} from './projects.js';
import { acceptProposal, proposalDetail, proposalList, refuseProposal } from './proposals.js';
import { schoolYearApply, schoolYearPreview, schoolYearStart } from './school-year.js';
import { openNotice, resolveNotice, statusNotice, statusNotices, updateNotice } from './status.js';
import {
  createStudent,
  deleteStudent,
  graduateStudent,
  newStudent,
  reactivateStudent,
  studentDetail,
  studentList,
  updateStudent,
  withdrawStudent,
} from './students.js';
import { createRequest, requestDetail, requestList, withdrawRequest } from './update-requests.js';
import { exportFile, exportStart, importApply, importPreview, importStart } from './transfer.js';

/**
 * The admin console at /admin (ADMIN and ROOT accounts only): school data (students, clubs,
 * projects, import and export, the school year, the audit log) through GraphQL, and the accounts
 * and API keys of every user through their services (docs/web.md). One route table: a page is a
 * line here, a handler and its view in the part's file, and its texts.
 */
export function adminRoutes(web: Web): RouteTable<AdminDeps> {
  return {
    // Staff privilege with a second factor where required, signed in at most 15 minutes ago.
    access: 'staff-fresh',
    csrf: web.sessionForms,
    section: { label: (t) => t.admin.title, home: '/admin' },
    prefix: '/admin',
    routes: [
      { method: 'GET', path: '/admin', handler: adminHome },
      { method: 'GET', path: '/admin/students', handler: studentList, nav: (t) => t.admin.nav.students },
      { method: 'GET', path: '/admin/students/new', handler: newStudent },
      { method: 'GET', path: '/admin/students/requests', handler: requestList },
      { method: 'POST', path: '/admin/students/requests', handler: createRequest },
      { method: 'GET', path: '/admin/students/requests/:id', handler: requestDetail },
      { method: 'POST', path: '/admin/students/requests/:id/withdraw', handler: withdrawRequest },
      { method: 'POST', path: '/admin/students', handler: createStudent },
      { method: 'GET', path: '/admin/students/:id', handler: studentDetail },
      { method: 'POST', path: '/admin/students/:id', handler: updateStudent },
      { method: 'POST', path: '/admin/students/:id/graduate', handler: graduateStudent },
      { method: 'POST', path: '/admin/students/:id/withdraw', handler: withdrawStudent },
      { method: 'POST', path: '/admin/students/:id/reactivate', handler: reactivateStudent },
      { method: 'POST', path: '/admin/students/:id/delete', handler: deleteStudent },
      { method: 'GET', path: '/admin/clubs', handler: clubList, nav: (t) => t.admin.nav.clubs },
      { method: 'GET', path: '/admin/clubs/new', handler: newClub },
      { method: 'POST', path: '/admin/clubs', handler: createClub },
      { method: 'GET', path: '/admin/clubs/:id', handler: clubDetail },
      { method: 'POST', path: '/admin/clubs/:id', handler: updateClub },
      { method: 'POST', path: '/admin/clubs/:id/abolish', handler: abolishClub },
      { method: 'POST', path: '/admin/clubs/:id/delete', handler: deleteClub },
      { method: 'GET', path: '/admin/projects', handler: projectList, nav: (t) => t.admin.nav.projects },
      { method: 'GET', path: '/admin/projects/new', handler: newProject },
      { method: 'POST', path: '/admin/projects', handler: createProject },
      { method: 'GET', path: '/admin/projects/:id', handler: projectDetail },
      { method: 'POST', path: '/admin/projects/:id', handler: updateProject },
      { method: 'POST', path: '/admin/projects/:id/end', handler: endProject },
      { method: 'POST', path: '/admin/projects/:id/reopen', handler: reopenProject },
      { method: 'POST', path: '/admin/projects/:id/delete', handler: deleteProject },
      { method: 'GET', path: '/admin/proposals', handler: proposalList, nav: (t) => t.admin.nav.proposals },
      { method: 'GET', path: '/admin/proposals/:id', handler: proposalDetail },
      { method: 'POST', path: '/admin/proposals/:id/accept', handler: acceptProposal },
      { method: 'POST', path: '/admin/proposals/:id/refuse', handler: refuseProposal },
      { method: 'GET', path: '/admin/import', handler: importStart, nav: (t) => t.admin.nav.import },
      { method: 'POST', path: '/admin/import', handler: importPreview, upload: true },
      { method: 'POST', path: '/admin/import/apply', handler: importApply },
      { method: 'GET', path: '/admin/export', handler: exportStart, nav: (t) => t.admin.nav.export },
      { method: 'GET', path: '/admin/export/file', handler: exportFile },
      { method: 'GET', path: '/admin/school-year', handler: schoolYearStart, nav: (t) => t.admin.nav.schoolYear },
      { method: 'POST', path: '/admin/school-year', handler: schoolYearPreview, upload: true },
      { method: 'POST', path: '/admin/school-year/apply', handler: schoolYearApply },
      { method: 'GET', path: '/admin/jobs/:id', handler: jobPage },
      { method: 'GET', path: '/admin/audit', handler: auditList, nav: (t) => t.admin.nav.audit },
      { method: 'GET', path: '/admin/audit/export', handler: auditExport },
      { method: 'POST', path: '/admin/audit/undo', handler: auditUndo },
      { method: 'GET', path: '/admin/accounts', handler: accountList, nav: (t) => t.admin.nav.accounts },
      { method: 'POST', path: '/admin/accounts/:id/role', handler: changeRole },
      { method: 'POST', path: '/admin/accounts/:id/approval', handler: decideTeacher },
      { method: 'GET', path: '/admin/accounts/:id', handler: accountDetail },
      { method: 'POST', path: '/admin/accounts/:id/disable', handler: setDisabled(true) },
      { method: 'POST', path: '/admin/accounts/:id/enable', handler: setDisabled(false) },
      { method: 'POST', path: '/admin/accounts/:id/reset', handler: sendReset },
      { method: 'POST', path: '/admin/accounts/:id/passkeys/remove', handler: removePasskeys },
      { method: 'POST', path: '/admin/accounts/:id/delete', handler: deleteAccount },
      { method: 'GET', path: '/admin/keys', handler: keyList, nav: (t) => t.admin.nav.keys },
      { method: 'POST', path: '/admin/keys/:id/renew', handler: renewKey },
      { method: 'POST', path: '/admin/keys/:id/revoke', handler: revokeKey },
      { method: 'POST', path: '/admin/keys/:id/scopes', handler: decideKeyScopes },
      { method: 'GET', path: '/admin/apps', handler: appRegistry, nav: (t) => t.admin.nav.apps },
      { method: 'POST', path: '/admin/apps/:id', handler: changeApp },
      { method: 'GET', path: '/admin/status', handler: statusNotices, nav: (t) => t.admin.nav.status },
      { method: 'POST', path: '/admin/status', handler: openNotice },
      { method: 'GET', path: '/admin/status/:id', handler: statusNotice },
      { method: 'POST', path: '/admin/status/:id', handler: updateNotice },
      { method: 'POST', path: '/admin/status/:id/resolve', handler: resolveNotice },
    ],
  };
}

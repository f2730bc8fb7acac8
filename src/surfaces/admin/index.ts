import { recordRoutes, type RouteTable } from '../web/routes.js';
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
import { abolishClub, clubForms, clubList, deleteClub } from './clubs.js';
import type { AdminDeps } from './deps.js';
import { adminHome } from './home.js';
import { jobPage } from './jobs.js';
import { decideKeyScopes, keyList, renewKey, revokeKey } from './keys.js';
import { deleteProject, endProject, projectForms, projectList, reopenProject } from './projects.js';
import { acceptProposal, proposalDetail, proposalList, refuseProposal } from './proposals.js';
import { schoolYearApply, schoolYearPreview, schoolYearStart } from './school-year.js';
import { openNotice, resolveNotice, statusNotice, statusNotices, updateNotice } from './status.js';
import { deleteStudent, graduateStudent, reactivateStudent, studentForms, studentList, withdrawStudent } from './students.js';
import { createRequest, requestDetail, requestList, withdrawRequest } from './update-requests.js';
import { exportFile, exportStart, importApply, importPreview, importStart } from './transfer.js';

/**
 * The admin console at /admin (ADMIN and ROOT accounts only): school data (students, clubs,
 * projects, import and export, the school year, the audit log) through GraphQL, and the accounts
 * and API keys of every user through their services (docs/web.md). One route table: a page is a
 * line here (a kind of record's pages one entry, recordRoutes), a handler and its view in the
 * part's file, and its texts.
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
      // The requests before the students: `/admin/students/requests` is not a student's id.
      ...recordRoutes('/admin/students/requests', {
        list: requestList,
        create: createRequest,
        detail: requestDetail,
        actions: { withdraw: withdrawRequest },
      }),
      ...recordRoutes('/admin/students', {
        list: studentList,
        nav: (t) => t.admin.nav.students,
        ...studentForms,
        actions: { graduate: graduateStudent, withdraw: withdrawStudent, reactivate: reactivateStudent, delete: deleteStudent },
      }),
      ...recordRoutes('/admin/clubs', {
        list: clubList,
        nav: (t) => t.admin.nav.clubs,
        ...clubForms,
        actions: { abolish: abolishClub, delete: deleteClub },
      }),
      ...recordRoutes('/admin/projects', {
        list: projectList,
        nav: (t) => t.admin.nav.projects,
        ...projectForms,
        actions: { end: endProject, reopen: reopenProject, delete: deleteProject },
      }),
      ...recordRoutes('/admin/proposals', {
        list: proposalList,
        nav: (t) => t.admin.nav.proposals,
        detail: proposalDetail,
        actions: { accept: acceptProposal, refuse: refuseProposal },
      }),
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
      ...recordRoutes('/admin/accounts', {
        list: accountList,
        nav: (t) => t.admin.nav.accounts,
        detail: accountDetail,
        actions: {
          role: changeRole,
          approval: decideTeacher,
          disable: setDisabled(true),
          enable: setDisabled(false),
          reset: sendReset,
          'passkeys/remove': removePasskeys,
          delete: deleteAccount,
        },
      }),
      ...recordRoutes('/admin/keys', {
        list: keyList,
        nav: (t) => t.admin.nav.keys,
        actions: { renew: renewKey, revoke: revokeKey, scopes: decideKeyScopes },
      }),
      ...recordRoutes('/admin/apps', { list: appRegistry, nav: (t) => t.admin.nav.apps, update: changeApp }),
      ...recordRoutes('/admin/status', {
        list: statusNotices,
        nav: (t) => t.admin.nav.status,
        create: openNotice,
        detail: statusNotice,
        update: updateNotice,
        actions: { resolve: resolveNotice },
      }),
    ],
  };
}

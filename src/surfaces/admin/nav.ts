import type { Lang } from '../../http/web/lang.js';
import type { NavItem } from '../../http/web/page.js';

/** The admin console's name and navigation (every admin page renders in this shell). */
export function adminShell(lang: Lang): { product: NavItem; nav: NavItem[] } {
  const ko = lang === 'ko';
  return {
    product: { href: '/admin', label: ko ? '관리자 콘솔' : 'Admin console' },
    nav: [
      { href: '/admin/students', label: ko ? '학생' : 'Students' },
      { href: '/admin/clubs', label: ko ? '동아리' : 'Clubs' },
      { href: '/admin/projects', label: ko ? '프로젝트' : 'Projects' },
      { href: '/admin/import', label: ko ? '가져오기' : 'Import' },
      { href: '/admin/export', label: ko ? '내보내기' : 'Export' },
      { href: '/admin/school-year', label: ko ? '학년도 전환' : 'School year' },
      { href: '/admin/audit', label: ko ? '변경 기록' : 'Audit log' },
      { href: '/admin/accounts', label: ko ? '계정' : 'Accounts' },
      { href: '/admin/keys', label: ko ? 'API 키' : 'API keys' },
    ],
  };
}

import { z } from 'zod';
import { ApiScope } from '../data/__generated__/enums.js';

/**
 * Which data-API scopes each account role gets on a key at once, and which wait for an admin's
 * approval. A scope in neither list cannot be asked for by that role. The default is
 * the table below; KEY_SCOPE_POLICY (JSON, one entry per role to change) overrides it role by
 * role, e.g. `{"USER":{"granted":["NEIS_READ"],"approval":["CLUB_READ","PROJECT_READ","STUDENT_READ"]}}`.
 * Operator keys (`campus keys issue` without `--owner`) are not bound by it.
 */
export const POLICY_ROLES = ['USER', 'TEACHER', 'ADMIN', 'ROOT'] as const;
export type PolicyRole = (typeof POLICY_ROLES)[number];
/** The data scopes, as the schema names them (schema/base.graphql, the one list of them). */
export const POLICY_SCOPES: readonly ApiScope[] = Object.values(ApiScope);
export type PolicyScope = ApiScope;

export interface RolePolicy {
  /** Granted when the key is issued. */
  readonly granted: readonly PolicyScope[];
  /** Pending on the key until an admin approves (or refuses) it. */
  readonly approval: readonly PolicyScope[];
}
export type ScopePolicy = Readonly<Record<PolicyRole, RolePolicy>>;

export const DEFAULT_SCOPE_POLICY: ScopePolicy = {
  USER: { granted: ['NEIS_READ', 'CLUB_READ', 'PROJECT_READ'], approval: ['STUDENT_READ'] },
  TEACHER: { granted: POLICY_SCOPES, approval: [] },
  ADMIN: { granted: POLICY_SCOPES, approval: [] },
  ROOT: { granted: POLICY_SCOPES, approval: [] },
};

const rolePolicy = z
  .object({ granted: z.array(z.enum(ApiScope)).default([]), approval: z.array(z.enum(ApiScope)).default([]) })
  .strict()
  .refine((p) => !p.granted.some((s) => p.approval.includes(s)), 'a scope cannot be both granted and awaiting approval');

/** KEY_SCOPE_POLICY: a JSON object of roles to change; the others keep the default. */
export const scopePolicySpec = z
  .string()
  .optional()
  .transform((value, ctx): ScopePolicy => {
    if (value === undefined || value.trim() === '') return DEFAULT_SCOPE_POLICY;
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      ctx.addIssue({
        code: 'custom',
        message: 'must be a JSON object, e.g. {"USER":{"granted":["NEIS_READ"],"approval":["STUDENT_READ"]}}',
      });
      return z.NEVER;
    }
    const result = z
      .object({ USER: rolePolicy, TEACHER: rolePolicy, ADMIN: rolePolicy, ROOT: rolePolicy })
      .partial()
      .strict()
      .safeParse(parsed);
    if (!result.success) {
      ctx.addIssue({ code: 'custom', message: result.error.issues.map((i) => `${i.path.join('.') || 'policy'}: ${i.message}`).join('; ') });
      return z.NEVER;
    }
    return { ...DEFAULT_SCOPE_POLICY, ...result.data };
  });

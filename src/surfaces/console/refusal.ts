import type { SelfServiceError } from '../../oauth/self-service.js';
import type { FieldError } from '../web/components.js';
import type { PageRequest } from '../web/routes.js';
import type { ConsoleDeps } from './deps.js';

/** A refusal of the self-service (a wrong password, too many tries) at the form's field, with its status (429 says when to retry). */
export function refusal(req: PageRequest, deps: ConsoleDeps, err: SelfServiceError, field: string): { error: FieldError; status: number } {
  const retryAfter = err.retryAfterSeconds ?? 60;
  if (err.status === 429) req.ctx.set('Retry-After', String(retryAfter));
  const message = req.t.accounts.problems(deps.config.schoolEmailDomain, Math.max(1, Math.ceil(retryAfter / 60)))[err.problem];
  return { error: { field, message }, status: err.status === 429 ? 429 : 422 };
}

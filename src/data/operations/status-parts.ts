/*
 * The parts of the service the status page shows (docs/operations.md, "The status page"), in its
 * order: what people use (the data API, sign-in, userinfo), then what those rest on. The checks
 * of each are in src/data/operations/status.ts; their names in the page's texts
 * (src/surfaces/web/texts/status.ts), which `satisfies` this list.
 */
export const STATUS_PARTS = ['data-api', 'sign-in', 'userinfo', 'database', 'redis', 'neis', 'webhooks'] as const;
export type StatusPart = (typeof STATUS_PARTS)[number];

/** Whether `value` names a part. */
export function isStatusPart(value: string): value is StatusPart {
  return (STATUS_PARTS as readonly string[]).includes(value);
}

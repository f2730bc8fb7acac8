import type { AppContext, AppMiddleware } from '../../http/context.js';
import { FILE_LIMITS } from '../../data/school/spreadsheet.js';

/** An uploaded file of a multipart form. */
export interface UploadedFile {
  readonly name: string;
  readonly bytes: Buffer;
}

/** Room for the form's other fields and the multipart framing beside the largest file. */
const FORM_OVERHEAD = 64 * 1024;
/** A body past this is not read to its end: the connection is closed after the answer. */
const DRAIN_LIMIT = 4 * (FILE_LIMITS.maxBytes + FORM_OVERHEAD);

const uploads = new WeakMap<AppContext, { file: UploadedFile | null; tooLarge: boolean }>();

/**
 * Parses a multipart/form-data post (the import and rollover forms work without JavaScript, so
 * the file comes as a form field). No parsing library is added: Node's own WHATWG `Response`
 * (undici) parses multipart bodies; this middleware only bounds the body first, so a file past
 * the limit is reported (tooLarge) instead of read into memory. The string fields become the
 * request body, so the CSRF check that runs next (./csrf.ts) sees them.
 */
export function multipartForm(): AppMiddleware {
  return async (ctx, next) => {
    const type = ctx.get('content-type');
    if (!/^multipart\/form-data\s*;/i.test(type)) {
      uploads.set(ctx, { file: null, tooLarge: false });
      return next();
    }
    const limit = FILE_LIMITS.maxBytes + FORM_OVERHEAD;
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
      if (size > DRAIN_LIMIT) {
        ctx.set('Connection', 'close');
        break;
      }
    }
    if (size > limit) {
      // The fields (the CSRF token among them) are lost with the body: say so without a check.
      uploads.set(ctx, { file: null, tooLarge: true });
      (ctx.request as { body?: unknown }).body = {};
      return next();
    }
    let form: FormData;
    try {
      form = await new Response(Buffer.concat(chunks), { headers: { 'content-type': type } }).formData();
    } catch {
      uploads.set(ctx, { file: null, tooLarge: false });
      (ctx.request as { body?: unknown }).body = {};
      return next();
    }
    const fields: Record<string, string> = {};
    let file: UploadedFile | null = null;
    for (const [name, value] of form.entries()) {
      if (typeof value === 'string') fields[name] = value;
      else if (name === 'file' && value.size > 0) file = { name: value.name || 'upload', bytes: Buffer.from(await value.arrayBuffer()) };
    }
    uploads.set(ctx, { file, tooLarge: false });
    (ctx.request as { body?: unknown }).body = fields;
    await next();
  };
}

/** The file of a parsed multipart form (null when none was chosen), and whether the body was over the limit. */
export function uploadOf(ctx: AppContext): { file: UploadedFile | null; tooLarge: boolean } {
  return uploads.get(ctx) ?? { file: null, tooLarge: false };
}

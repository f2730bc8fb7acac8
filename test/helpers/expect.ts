import { expect } from 'chai';

/** Asserts a data API error: exact status, the envelope's four fields, and returns the body. */
export async function expectEnvelope(
  res: Response,
  status: number,
  statusName: string,
  messageIncludes?: string | RegExp,
): Promise<{ status: string; code: number; message: string; data: unknown }> {
  expect(res.status, `HTTP status of ${res.url}`).to.equal(status);
  expect(res.headers.get('content-type')).to.equal('application/json; charset=utf-8');
  const body = (await res.json()) as { status: string; code: number; message: string; data: unknown };
  expect(Object.keys(body)).to.deep.equal(['status', 'code', 'message', 'data']);
  expect(body.status).to.equal(statusName);
  expect(body.code).to.equal(status);
  if (status !== 200) expect(body.data).to.equal(null);
  if (typeof messageIncludes === 'string') expect(body.message).to.include(messageIncludes);
  else if (messageIncludes) expect(body.message).to.match(messageIncludes);
  return body;
}

/** Asserts a 200 success envelope and returns its data. */
export async function expectOk<T = unknown>(res: Response): Promise<T> {
  expect(res.status, `HTTP status of ${res.url}`).to.equal(200);
  expect(res.headers.get('content-type')).to.equal('application/json; charset=utf-8');
  const body = (await res.json()) as { status: string; code: number; message: string; data: T };
  expect({ status: body.status, code: body.code, message: body.message }).to.deep.equal({ status: 'OK', code: 200, message: 'OK' });
  return body.data;
}

/**
 * Asserts a 200 envelope of one page of `list` (`students`, `clubs`, ...), its keys in order (the
 * envelope's four; then totalPages, totalElements and the list), and returns its data.
 */
export async function expectPage<T>(res: Response, list: string): Promise<T> {
  const body = await expectEnvelope(res, 200, 'OK', /^OK$/);
  expect(Object.keys(body.data as object)).to.deep.equal(['totalPages', 'totalElements', list]);
  return body.data as T;
}

/** Asserts an OAuth error body `{error, error_description}` with an exact status. */
export async function expectOAuthError(
  res: Response,
  status: number,
  error: string,
  descriptionIncludes?: string | RegExp,
): Promise<{ error: string; error_description: string }> {
  expect(res.status, `HTTP status of ${res.url}`).to.equal(status);
  const body = (await res.json()) as { error: string; error_description: string };
  expect(body.error).to.equal(error);
  expect(body.error_description).to.be.a('string');
  if (typeof descriptionIncludes === 'string') expect(body.error_description).to.include(descriptionIncludes);
  else if (descriptionIncludes) expect(body.error_description).to.match(descriptionIncludes);
  return body;
}

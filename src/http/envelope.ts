import { statusName } from '../errors/index.js';

/** The data API's success and error bodies: `{status, code, message, data}`. */
export interface Envelope<T> {
  readonly status: string;
  readonly code: number;
  readonly message: string;
  readonly data: T;
}

export function successEnvelope<T>(data: T): Envelope<T> {
  return { status: 'OK', code: 200, message: 'OK', data };
}

export function errorEnvelope(status: number, message: string, data: unknown = null): Envelope<unknown> {
  return { status: statusName(status), code: status, message, data };
}

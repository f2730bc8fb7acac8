import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** A mail as the test SMTP server received it, its text decoded. */
export interface ReceivedMail {
  readonly from: string;
  readonly to: readonly string[];
  readonly subject: string;
  readonly text: string;
  readonly raw: string;
}

/**
 * A real SMTP server on a loopback port (the smtp-server package), for SMTP_URL in tests: the
 * service sends through nodemailer exactly as in production, and the test reads what arrived.
 */
export class TestMailServer {
  readonly mails: ReceivedMail[] = [];
  private readonly waiters: { match: (mail: ReceivedMail) => boolean; done: (mail: ReceivedMail) => void }[] = [];

  private constructor(
    private readonly server: SMTPServer,
    readonly port: number,
  ) {}

  static async start(): Promise<TestMailServer> {
    // The server's callback delivers to the instance made once the server listens.
    const holder: { self?: TestMailServer } = {};
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          const to = session.envelope.rcptTo.map((r) => r.address.toLowerCase());
          const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
          holder.self?.receive(parseMail(raw, from, to));
          callback();
        });
      },
    });
    server.listen(0, '127.0.0.1');
    await once(server.server, 'listening');
    holder.self = new TestMailServer(server, (server.server.address() as AddressInfo).port);
    return holder.self;
  }

  /** SMTP_URL for the service. */
  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  /** The next mail to `to` that matches (already received ones included, newest first). */
  async waitFor(to: string, match: (mail: ReceivedMail) => boolean = () => true, timeoutMs = 10_000): Promise<ReceivedMail> {
    const wanted = (mail: ReceivedMail) => mail.to.includes(to.toLowerCase()) && match(mail);
    const existing = [...this.mails].reverse().find(wanted);
    if (existing) return existing;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no mail to ${to} within ${timeoutMs} ms`)), timeoutMs);
      this.waiters.push({
        match: wanted,
        done: (mail) => {
          clearTimeout(timer);
          resolve(mail);
        },
      });
    });
  }

  /** Waits for a new mail to `to` (one received after this call) and returns its 8-digit code. */
  async nextCode(to: string, after: number = this.mails.length): Promise<string> {
    const mail = await this.waitFor(to, (m) => this.mails.indexOf(m) >= after && codeOf(m) !== undefined);
    const code = codeOf(mail);
    if (!code) throw new Error('no code in the mail');
    return code;
  }

  mailsTo(to: string): ReceivedMail[] {
    return this.mails.filter((m) => m.to.includes(to.toLowerCase()));
  }

  async close(): Promise<void> {
    await new Promise<void>((done) => this.server.close(() => done()));
  }

  private receive(mail: ReceivedMail): void {
    this.mails.push(mail);
    for (const waiter of [...this.waiters]) {
      if (!waiter.match(mail)) continue;
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      waiter.done(mail);
    }
  }
}

/** The 8-digit code of a mail (on a line of its own), if it has one. */
export function codeOf(mail: ReceivedMail): string | undefined {
  return /^\s+(\d{8})\s*$/m.exec(mail.text)?.[1];
}

/** Headers and the text part of a single-part mail (what the service sends), decoded. */
function parseMail(raw: string, from: string, to: string[]): ReceivedMail {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const body = raw.slice(split + 4);
  const header = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(head)?.[1] ?? '';
  const encoding = header('Content-Transfer-Encoding').toLowerCase();
  const text =
    encoding === 'quoted-printable'
      ? decodeQuotedPrintable(body)
      : encoding === 'base64'
        ? Buffer.from(body, 'base64').toString('utf8')
        : body;
  return { from, to, subject: decodeWords(header('Subject')), text: text.replace(/\r\n/g, '\n'), raw };
}

function decodeQuotedPrintable(text: string): string {
  return qpBytes(text.replace(/=\r?\n/g, '')).toString('utf8');
}

function qpBytes(text: string): Buffer {
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const char = text[i] ?? '';
    const hex = text.slice(i + 1, i + 3);
    if (char === '=' && /^[0-9A-F]{2}$/i.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else bytes.push(...Buffer.from(char, 'utf8'));
  }
  return Buffer.from(bytes);
}

/**
 * RFC 2047 encoded words (=?UTF-8?B?...?= and =?UTF-8?Q?...?=) of a header. Adjacent words are
 * joined as bytes first: a character may be split between two of them.
 */
function decodeWords(value: string): string {
  const word = /=\?utf-8\?([bq])\?([^?]*)\?=/gi;
  const parts: (string | Buffer)[] = [];
  let last = 0;
  for (const match of value.matchAll(word)) {
    const between = value.slice(last, match.index);
    if (between.trim() !== '' || parts.length === 0 || typeof parts[parts.length - 1] === 'string') parts.push(between);
    const [, kind = 'b', data = ''] = match;
    parts.push(kind.toLowerCase() === 'b' ? Buffer.from(data, 'base64') : qpBytes(data.replace(/_/g, ' ')));
    last = match.index + match[0].length;
  }
  parts.push(value.slice(last));
  let out = '';
  let pending: Buffer[] = [];
  for (const part of parts) {
    if (Buffer.isBuffer(part)) {
      pending.push(part);
      continue;
    }
    out += Buffer.concat(pending).toString('utf8') + part;
    pending = [];
  }
  return out + Buffer.concat(pending).toString('utf8');
}

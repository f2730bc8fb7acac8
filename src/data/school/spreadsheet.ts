import { Readable } from 'node:stream';
import { createInflateRaw } from 'node:zlib';
import ExcelJS from 'exceljs';
import type { IssueCode } from './types.js';

/*
 * Spreadsheets in and out (exceljs, for .xlsx and .csv alike). A file is recognized by its
 * content, never its name: an .xlsx is a ZIP holding xl/workbook.xml; a CSV is text (UTF-8, or
 * the CP949 that Korean Excel writes). Formulas are never evaluated: a formula cell is read as
 * the result the spreadsheet program saved with it, and one without a saved result is refused.
 * Text written out that a spreadsheet would run as a formula (starting with = + - @, or a tab
 * or carriage return) is prefixed with an apostrophe, which imports take off again.
 */

export const FILE_LIMITS = {
  /** The largest file accepted. */
  maxBytes: 5 * 1024 * 1024,
  /** Data rows (after the header) across every sheet. */
  maxRows: 20_000,
  /**
   * What a workbook may unpack to, all its entries together, and what one entry may: counted
   * while inflating, never taken from the sizes the ZIP declares (a 5 MB file can lie about them).
   */
  maxUnpackedBytes: 200 * 1024 * 1024,
  maxEntryBytes: 100 * 1024 * 1024,
  /**
   * Columns a sheet may use beyond its template's (unknown columns are reported by name): a cell
   * far to the right (XFD1) would otherwise make every row 16,384 cells wide in memory.
   */
  extraColumns: 20,
} as const;

export type FileFormat = 'xlsx' | 'csv';

/** One cell as read: its text, or why it has none usable. */
export interface ReadCell {
  readonly text: string | null;
  readonly problem?: { readonly code: IssueCode; readonly params: Readonly<Record<string, string>> };
}

export interface ReadRow {
  /** 1-based, as the spreadsheet shows it. */
  readonly number: number;
  readonly cells: readonly ReadCell[];
}

export interface ReadSheet {
  /** The worksheet's name; null for CSV. */
  readonly name: string | null;
  readonly rows: readonly ReadRow[];
}

export type ReadResult =
  | { readonly ok: true; readonly format: FileFormat; readonly sheets: readonly ReadSheet[] }
  | { readonly ok: false; readonly code: IssueCode; readonly params: Readonly<Record<string, string | number>> };

/**
 * Reads a file's sheets, or says why it is not a spreadsheet this service reads. A sheet wider
 * than `maxColumns` is refused before exceljs reads it. Imports run this in a worker thread with
 * memory limits (./spreadsheet-thread.ts); call it directly only for files this service wrote.
 */
export async function readSpreadsheet(bytes: Buffer, maxColumns: number): Promise<ReadResult> {
  if (bytes.length === 0) return { ok: false, code: 'EMPTY_FILE', params: {} };
  if (bytes.length > FILE_LIMITS.maxBytes) {
    return { ok: false, code: 'TOO_LARGE', params: { size: formatBytes(bytes.length), max: formatBytes(FILE_LIMITS.maxBytes) } };
  }
  if (startsWith(bytes, [0x50, 0x4b, 0x03, 0x04])) return readXlsx(bytes, maxColumns);
  if (startsWith(bytes, [0xd0, 0xcf, 0x11, 0xe0])) return { ok: false, code: 'OLD_EXCEL', params: {} };
  const text = decodeText(bytes);
  if (text === null) return { ok: false, code: 'NOT_SPREADSHEET', params: {} };
  const widest = csvWidth(text);
  if (widest > maxColumns) return tooWide(widest, maxColumns);
  return readCsv(text);
}

function tooWide(columns: number, maxColumns: number): ReadResult {
  return { ok: false, code: 'TOO_WIDE', params: { last: columnName(columns), max: maxColumns, lastMax: columnName(maxColumns) } };
}

/** The spreadsheet name of a 1-based column number (1 = A, 27 = AA, 16384 = XFD). */
export function columnName(n: number): string {
  let letters = '';
  for (let rest = n; rest > 0; rest = Math.floor((rest - 1) / 26)) letters = String.fromCharCode(65 + ((rest - 1) % 26)) + letters;
  return letters;
}

function columnNumber(letters: string): number {
  let n = 0;
  for (const letter of letters) n = n * 26 + (letter.charCodeAt(0) - 64);
  return n;
}

/** The most fields of any CSV line (commas outside quotes, plus one), counted before exceljs splits it. */
function csvWidth(text: string): number {
  let widest = 0;
  let fields = 1;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) quoted = !quoted;
    else if (c === 0x2c && !quoted) fields++;
    else if (c === 0x0a && !quoted) {
      widest = Math.max(widest, fields);
      fields = 1;
    }
  }
  return Math.max(widest, fields);
}

function startsWith(bytes: Buffer, signature: number[]): boolean {
  return signature.every((b, i) => bytes[i] === b);
}

/** Text of a CSV: UTF-8 (BOM optional), else CP949; null for anything binary. */
function decodeText(bytes: Buffer): string | null {
  const body = startsWith(bytes, [0xef, 0xbb, 0xbf]) ? bytes.subarray(3) : bytes;
  for (const encoding of ['utf-8', 'euc-kr']) {
    let text: string;
    try {
      text = new TextDecoder(encoding, { fatal: true }).decode(body);
    } catch {
      continue;
    }
    // Control characters other than tab and line breaks do not occur in spreadsheet text.
    if (hasControlCharacters(text) || text.startsWith('%PDF')) return null;
    return text;
  }
  return null;
}

/** Control characters other than tab, line feed and carriage return (binary content). */
function hasControlCharacters(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) || c === 0x7f) return true;
  }
  return false;
}

async function readCsv(text: string): Promise<ReadResult> {
  const workbook = new ExcelJS.Workbook();
  try {
    // Every value stays the text it was written as (exceljs would otherwise turn numbers and dates into values).
    const sheet = await workbook.csv.read(Readable.from([text]), { map: (value: unknown) => value, parserOptions: { ignoreEmpty: false } });
    return { ok: true, format: 'csv', sheets: [{ name: null, rows: sheetRows(sheet) }] };
  } catch (err) {
    return {
      ok: false,
      code: 'UNREADABLE',
      params: { format: 'CSV', detail: err instanceof Error ? err.message.slice(0, 200) : 'malformed' },
    };
  }
}

async function readXlsx(bytes: Buffer, maxColumns: number): Promise<ReadResult> {
  const entries = zipEntries(bytes);
  if (!entries || !entries.some((e) => e.name === 'xl/workbook.xml')) return { ok: false, code: 'NOT_SPREADSHEET', params: {} };
  const unpacked = await unpackCounted(bytes, entries);
  if (!unpacked.ok) return unpacked;
  if (unpacked.widest > maxColumns) return tooWide(unpacked.widest, maxColumns);
  const workbook = new ExcelJS.Workbook();
  try {
    // exceljs types its argument with an older Buffer declaration; the bytes are a Node Buffer.
    await workbook.xlsx.load(bytes as unknown as Parameters<ExcelJS.Xlsx['load']>[0]);
  } catch (err) {
    return {
      ok: false,
      code: 'UNREADABLE',
      params: { format: '.xlsx', detail: err instanceof Error ? err.message.slice(0, 200) : 'malformed' },
    };
  }
  return { ok: true, format: 'xlsx', sheets: workbook.worksheets.map((ws) => ({ name: ws.name, rows: sheetRows(ws) })) };
}

/** The rows that hold anything, with their numbers as the spreadsheet shows them. */
function sheetRows(sheet: ExcelJS.Worksheet): ReadRow[] {
  const rows: ReadRow[] = [];
  sheet.eachRow({ includeEmpty: false }, (row, number) => {
    const cells: ReadCell[] = [];
    for (let col = 1; col <= row.cellCount; col++) cells.push(readCell(row.getCell(col).value));
    if (cells.some((c) => c.text !== null || c.problem)) rows.push({ number, cells });
  });
  return rows;
}

function readCell(value: ExcelJS.CellValue): ReadCell {
  if (value === null || value === undefined) return { text: null };
  if (typeof value === 'string') return { text: unescapeText(value) };
  if (typeof value === 'number') return { text: Number.isFinite(value) ? String(value) : null };
  if (typeof value === 'boolean') return { text: value ? 'TRUE' : 'FALSE' };
  if (value instanceof Date) return { text: Number.isNaN(value.getTime()) ? null : value.toISOString().slice(0, 10) };
  if ('error' in value) return { text: null, problem: { code: 'CELL_ERROR', params: { got: String(value.error) } } };
  if ('richText' in value) return { text: unescapeText(value.richText.map((r) => r.text).join('')) };
  if ('hyperlink' in value) return { text: unescapeText(String(value.text)) };
  if ('formula' in value || 'sharedFormula' in value) {
    const formula = ('formula' in value && value.formula) || ('sharedFormula' in value ? value.sharedFormula : '') || '';
    if (value.result === undefined || value.result === null)
      return { text: null, problem: { code: 'FORMULA_NO_RESULT', params: { formula } } };
    return readCell(value.result);
  }
  return { text: null };
}

/** Text that a spreadsheet would take for a formula (OWASP "CSV injection"). */
const FORMULA_START = /^[=+\-@\t\r]/;

/** Neutralizes text a spreadsheet would run: an apostrophe in front. */
export function escapeText(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text;
}

/** Takes off the apostrophe escapeText put in front (so an export imports back unchanged). */
export function unescapeText(text: string): string {
  return text.startsWith("'") && FORMULA_START.test(text.slice(1)) ? text.slice(1) : text;
}

export type OutCell = string | number | null;

export interface OutSheet {
  readonly name: string;
  readonly header: readonly string[];
  readonly rows: readonly (readonly OutCell[])[];
}

/** Writes sheets as .xlsx, or the first one as CSV (UTF-8 with a BOM, so Excel reads Korean right). */
export async function writeSpreadsheet(format: FileFormat, sheets: readonly OutSheet[]): Promise<Buffer> {
  const workbook = new ExcelJS.Workbook();
  workbook.creator = 'Campus Data Service';
  for (const out of sheets) {
    const sheet = workbook.addWorksheet(out.name, { views: [{ state: 'frozen', ySplit: 1 }] });
    sheet.addRow([...out.header]).font = { bold: true };
    for (const row of out.rows) sheet.addRow(row.map((cell) => (typeof cell === 'string' ? escapeText(cell) : cell)));
    sheet.columns.forEach((column, i) => {
      const longest = Math.max(8, [...(out.header[i] ?? '')].length * 2, ...out.rows.slice(0, 500).map((r) => String(r[i] ?? '').length));
      column.width = Math.min(60, longest + 2);
    });
  }
  if (format === 'xlsx') return Buffer.from(await workbook.xlsx.writeBuffer());
  const first = sheets[0];
  const csv = await workbook.csv.writeBuffer({
    ...(first ? { sheetName: first.name } : {}),
    map: (value: unknown) => value,
    formatterOptions: { writeBOM: true },
  });
  return Buffer.from(csv);
}

/** The content type of a format. */
export const CONTENT_TYPES: Readonly<Record<FileFormat, string>> = {
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  csv: 'text/csv; charset=utf-8',
};

export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1).replace(/\.0$/, '')} MB`;
  if (bytes >= 1024) return `${Math.ceil(bytes / 1024)} KB`;
  return `${bytes} bytes`;
}

/** One entry of a ZIP's central directory: where its data starts and how it is stored. */
interface ZipEntry {
  readonly name: string;
  /** 0 stored, 8 deflated. */
  readonly method: number;
  readonly compressedSize: number;
  readonly localOffset: number;
}

/**
 * A ZIP's entries, from its central directory (the one exceljs's JSZip reads too); null when it
 * is not a readable ZIP. The uncompressed sizes it declares are ignored: see unpackCounted.
 */
function zipEntries(bytes: Buffer): ZipEntry[] | null {
  const END = 0x06054b50;
  const ENTRY = 0x02014b50;
  let end = -1;
  for (let i = bytes.length - 22; i >= Math.max(0, bytes.length - 22 - 0xffff); i--) {
    if (bytes.readUInt32LE(i) === END) {
      end = i;
      break;
    }
  }
  if (end < 0) return null;
  const count = bytes.readUInt16LE(end + 10);
  let offset = bytes.readUInt32LE(end + 16);
  const entries: ZipEntry[] = [];
  for (let n = 0; n < count; n++) {
    if (offset + 46 > bytes.length || bytes.readUInt32LE(offset) !== ENTRY) return null;
    const nameLength = bytes.readUInt16LE(offset + 28);
    entries.push({
      name: bytes.toString('utf8', offset + 46, offset + 46 + nameLength),
      method: bytes.readUInt16LE(offset + 10),
      compressedSize: bytes.readUInt32LE(offset + 20),
      localOffset: bytes.readUInt32LE(offset + 42),
    });
    offset += 46 + nameLength + bytes.readUInt16LE(offset + 30) + bytes.readUInt16LE(offset + 32);
  }
  return entries;
}

type Unpacked = { readonly ok: true; readonly widest: number } | Extract<ReadResult, { ok: false }>;

/**
 * Inflates every entry once, counting the bytes that actually come out and stopping as soon as
 * an entry passes FILE_LIMITS.maxEntryBytes or all together pass maxUnpackedBytes; nothing is
 * kept but the count and, for worksheets, the rightmost column any cell or range names.
 */
async function unpackCounted(bytes: Buffer, entries: readonly ZipEntry[]): Promise<Unpacked> {
  const refused = (detail: string): Unpacked => ({ ok: false, code: 'UNREADABLE', params: { format: '.xlsx', detail } });
  let total = 0;
  let widest = 0;
  for (const entry of entries) {
    const local = entry.localOffset;
    if (local + 30 > bytes.length || bytes.readUInt32LE(local) !== 0x04034b50) return refused(`the ZIP entry ${entry.name} is damaged`);
    const start = local + 30 + bytes.readUInt16LE(local + 26) + bytes.readUInt16LE(local + 28);
    const data = bytes.subarray(start, start + entry.compressedSize);
    const scan = /^xl\/worksheets\/[^/]+\.xml$/.test(entry.name) ? new ColumnScan() : null;
    const cap = Math.min(FILE_LIMITS.maxEntryBytes, FILE_LIMITS.maxUnpackedBytes - total);
    const size = await inflatedSize(data, entry.method, cap, scan);
    if (size === 'method') return refused(`the ZIP entry ${entry.name} uses a compression method spreadsheets do not use`);
    if (size === 'damaged') return refused(`the ZIP entry ${entry.name} is damaged`);
    if (size === 'over') return { ok: false, code: 'UNPACKS_TOO_LARGE', params: { entry: entry.name, ...UNPACK_CAPS } };
    total += size;
    widest = Math.max(widest, scan?.widest ?? 0);
  }
  return { ok: true, widest };
}

const UNPACK_CAPS = { maxEntry: formatBytes(FILE_LIMITS.maxEntryBytes), maxTotal: formatBytes(FILE_LIMITS.maxUnpackedBytes) };

/** The bytes one entry inflates to, or 'over' as soon as they pass `cap` (the inflater is stopped). */
async function inflatedSize(
  data: Buffer,
  method: number,
  cap: number,
  scan: ColumnScan | null,
): Promise<number | 'over' | 'method' | 'damaged'> {
  if (method === 0) {
    if (data.length > cap) return 'over';
    scan?.add(data);
    return data.length;
  }
  if (method !== 8) return 'method';
  let size = 0;
  try {
    for await (const chunk of Readable.from([data]).pipe(createInflateRaw()) as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > cap) return 'over'; // leaving the loop destroys the inflater
      scan?.add(chunk);
    }
  } catch {
    return 'damaged';
  }
  return size;
}

/**
 * The rightmost column a worksheet's XML names, read chunk by chunk as it is inflated: every
 * cell reference (<c r="XFD1">) and range (<dimension ref="A1:XFD1">, merged cells, filters).
 */
class ColumnScan {
  private static readonly REF = /\b(?:r|ref)="\$?([A-Z]{1,3})\$?\d+(?::\$?([A-Z]{1,3})\$?\d+)?"/g;
  widest = 0;
  /** The end of the previous chunk, so a reference cut in two is read whole. */
  private tail = '';

  add(chunk: Buffer): void {
    const text = this.tail + chunk.toString('latin1');
    for (const match of text.matchAll(ColumnScan.REF)) {
      for (const letters of [match[1], match[2]]) if (letters) this.widest = Math.max(this.widest, columnNumber(letters));
    }
    this.tail = text.slice(-48);
  }
}

import type { Lang } from '../lang.js';
import { en } from './en.js';
import { ko, type Texts } from './ko.js';

export type { Texts } from './ko.js';

const CATALOGUES: Readonly<Record<Lang, Texts>> = { ko, en };

/** The catalogue of a language: every word a page shows comes from it. */
export function textsOf(lang: Lang): Texts {
  return CATALOGUES[lang];
}

/** The plural forms a count's words may take (Intl.PluralRules categories; English needs one and other). */
export type PluralForms = Partial<Record<Intl.LDMLPluralRule, string>> & { readonly other: string };

const rules = new Map<string, Intl.PluralRules>();
const numbers = new Map<string, Intl.NumberFormat>();

/**
 * A count in words by the language's own plural rules (Intl.PluralRules): `#` in the chosen form
 * is the number, written as the language writes numbers (`1,234`). Korean has one form; English
 * has one and other. The one rule for every text that counts: the pages' catalogues
 * (src/surfaces/web/texts/) and the command's English (`counted`).
 */
export function plural(locale: string, n: number, forms: PluralForms): string {
  const rule = rules.get(locale) ?? rules.set(locale, new Intl.PluralRules(locale)).get(locale);
  const format = numbers.get(locale) ?? numbers.set(locale, new Intl.NumberFormat(locale)).get(locale);
  const form = (rule && forms[rule.select(n)]) ?? forms.other;
  return form.replace('#', format ? format.format(n) : String(n));
}

/** An English count in words for the command's output: `1 document`, `2 documents`, `12345 documents` (digits as they are, for scripts). */
export function counted(n: number, noun: string): string {
  return plural('en-US', n, { one: `${n} ${noun}`, other: `${n} ${noun}s` });
}

/** A count as the texts write it in `locale` (`1,000`), for the catalogues kept apart from ko.ts / en.ts. */
export const n = (value: number, locale: string) => value.toLocaleString(locale);

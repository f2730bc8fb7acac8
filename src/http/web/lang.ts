/** Pages are Korean first; English on request (?lang=en, a cookie, or a browser that prefers it). */
export type Lang = 'ko' | 'en';

/** An explicit `lang` wins; otherwise English only when the browser ranks it above Korean. */
export function pickLanguage(explicit: unknown, acceptLanguage: string): Lang {
  if (explicit === 'ko' || explicit === 'en') return explicit;
  const ranked = acceptLanguage
    .split(',')
    .map((part) => {
      const [tag = '', ...params] = part.trim().toLowerCase().split(';');
      const q = params.map((p) => /^q=([\d.]+)$/.exec(p.trim())?.[1]).find(Boolean);
      return { lang: tag.split('-')[0] ?? '', q: q === undefined ? 1 : Number(q) };
    })
    .filter((entry) => entry.lang === 'ko' || entry.lang === 'en')
    .sort((a, b) => b.q - a.q);
  return ranked[0]?.lang === 'en' ? 'en' : 'ko';
}

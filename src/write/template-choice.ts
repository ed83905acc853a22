/**
 * Which v1 template renders a legacy POST /renders: an explicit project rule wins; otherwise the
 * project's template whose field keys cover the most keys of `data` (ties: the first the project
 * defines); otherwise none (the project is rendered as it stands). Pure.
 */
export interface TemplateFields {
  readonly id: string;
  readonly keys: readonly string[];
}

export function chooseTemplate(
  data: Readonly<Record<string, unknown>>,
  templates: readonly TemplateFields[],
  rule?: string,
): { templateId: string | null; reason: string } {
  if (rule) return { templateId: rule, reason: 'explicit project → template rule in mappings/writes.json' };
  const wanted = Object.keys(data);
  let best: TemplateFields | undefined;
  let bestScore = 0;
  for (const t of templates) {
    const keys = new Set(t.keys);
    const score = wanted.filter((k) => keys.has(k)).length;
    if (score > bestScore) {
      best = t;
      bestScore = score;
    }
  }
  return best
    ? { templateId: best.id, reason: `covers ${bestScore} of ${wanted.length} data keys` }
    : { templateId: null, reason: 'no template covers any data key' };
}

/** `title`, else `data.title`, else "<project title> <ISO time>", cut to 250 characters. */
export function renderName(title: unknown, data: Readonly<Record<string, unknown>>, projectName: string, now: Date): string {
  const pick =
    typeof title === 'string' && title.trim()
      ? title
      : typeof data.title === 'string' && data.title.trim()
        ? data.title
        : `${projectName} ${now.toISOString()}`;
  return [...pick].slice(0, 250).join('');
}

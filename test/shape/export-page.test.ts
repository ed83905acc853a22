import { describe, expect, it } from 'vitest';
import { csvExport } from '../../src/shape/export-csv.js';
import { exportPage } from '../../src/shape/export.js';

/**
 * Issue 38 (attack pass 2026-11-28, N2): a page's CSV whose renders' `data` carry thousands of keys is rows × columns
 * cells; it was written in one synchronous loop (33 s with the event loop held for a 50-render page). It is written a
 * row at a time now, the event loop given turns, with the same bytes as the whole-page writer.
 */
/** Counts the turns of the event loop until stopped (a synchronous writer lets none happen). */
function turnsOfTheLoop(): { stop(): number } {
  let turns = 0;
  let on = true;
  const tick = () => { if (!on) return; turns++; setImmediate(tick); };
  setImmediate(tick);
  return { stop: () => { on = false; return turns; } };
}

describe("a page's CSV export", () => {
  it('gives the event loop turns while it is written, and writes the same bytes', async () => {
    const items = Array.from({ length: 40 }, (_, i) => ({
      id: `r${i}`, title: `t${i}`, data: Object.fromEntries(Array.from({ length: 2_000 }, (_, k) => [`k${i}_${k}`, k])),
    }));
    const loop = turnsOfTheLoop();
    const file = await exportPage('csv', items, { escapeFormulas: true });
    let text = '';
    if (typeof file === 'string') text = file;
    else for await (const part of file) text += part;
    const turns = loop.stop();
    expect(turns).toBeGreaterThan(3); // the loop turned while the file was written (0 or 1 before: one synchronous loop)
    expect(text).toBe(await csvExport(items, { escapeFormulas: true }));
    expect(text.split('\n')).toHaveLength(41);
    expect(text.split('\n')[0]!.split(',')).toHaveLength(2 + 40 * 2_000);
  });

  it('one very wide row (60 000 data keys) is written in parts, the event loop turning between them (F3: one step a row)', async () => {
    const items = [{ id: 'r1', data: Object.fromEntries(Array.from({ length: 60_000 }, (_, k) => [`k${k}`, 'v'.repeat(20)])) }];
    const loop = turnsOfTheLoop();
    const file = await exportPage('csv', items, { escapeFormulas: true });
    let text = '';
    let parts = 0;
    if (typeof file === 'string') text = file;
    else for await (const part of file) { text += part; parts++; }
    const turns = loop.stop();
    expect(parts).toBeGreaterThan(20); // header and row, each in parts of at most 2 000 cells
    expect(turns).toBeGreaterThan(3);
    expect(text).toBe(await csvExport(items, { escapeFormulas: true }));
  });
});

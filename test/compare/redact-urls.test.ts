import { describe, expect, it } from 'vitest';
import { REDACTED, redactValue } from '../../src/compare/redact.js';

/** A comparison sample keeps no signed URL's signature (attack pass 19, F6): the query string is the capability. */
describe('comparison samples and signed URLs', () => {
  it('a URL\'s query is replaced whole, in any value; a URL without one and plain text stay', () => {
    const output = {
      poster: 'https://cdn.sim.invalid/renders/rend_1/still.jpg?expires=1795981357&signature=46811a7b00ff',
      master: 'https://cdn.sim.invalid/renders/rend_1/master.mp4?X-Amz-Signature=abc&X-Amz-Expires=300',
      low: null, medium: 'https://cdn.example/plain.mp4', title: 'a ? in a title',
    };
    expect(redactValue('data.output', output)).toEqual({
      poster: `https://cdn.sim.invalid/renders/rend_1/still.jpg?${REDACTED}`,
      master: `https://cdn.sim.invalid/renders/rend_1/master.mp4?${REDACTED}`,
      low: null, medium: 'https://cdn.example/plain.mp4', title: 'a ? in a title',
    });
    expect(redactValue('data[0].output.poster', output.poster)).toBe(`https://cdn.sim.invalid/renders/rend_1/still.jpg?${REDACTED}`);
  });
});

/**
 * npm run capture:directus — asks a real Directus 10.10 (bench/directus.ts: PostgreSQL 15, installed once) the queries
 * of test/fixtures/directus/queries.json over the same data the gateway serves (the test simulator's world, seed 1,
 * tiny), and writes what Directus answered (status, content type, disposition, body) to
 * test/fixtures/directus/answers.json. The tests hold the gateway to those answers; run this again when a query is added.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { buildApp } from '../src/app.js';
import { hashPassword } from '../src/auth/passwords.js';
import { loadConfig } from '../src/config/schema.js';
import { createDeps } from '../src/deps.js';
import { createLogger } from '../src/log/logger.js';
import { createSimulator } from '../src/sim/server.js';
import { DEFAULT_ROLE } from '../src/store/users.js';
import { loadLegacyData, startDirectus } from './directus.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const QUERIES = 'test/fixtures/directus/queries.json';
const ANSWERS = 'test/fixtures/directus/answers.json';
const queries = JSON.parse(readFileSync(QUERIES, 'utf8')) as { name: string; path: string }[];

const sim = createSimulator({ seed: 1, scale: 'tiny', clock: 'manual' });
const simUrl = await sim.listen(0);
const person = sim.world.listKeys()[0]!;
const config = loadConfig({
  V1_BASE_URL: simUrl, DATABASE_URL: join(mkdtempSync(join(tmpdir(), 'capture-')), 'g.db'), ENCRYPTION_KEY: '55'.repeat(32),
  JWT_SECRET: 'capture-secret-capture-secret-capture-0', LOG_LEVEL: 'silent', LOGIN_STALL_MS: '0',
});
const deps = await createDeps(config, createLogger('silent'));
const u = await deps.users.create({ email: 'capture@example.com', passwordHash: await hashPassword('capture-password'), role: DEFAULT_ROLE, v1Key: person.api_key, v1UserId: person.user_id });
await deps.idMap.importPairs([{ type: 'user', uuid: u.id, v1Id: person.user_id }]);
await deps.ids.load();
const app = await buildApp(deps);
const gwBase = await app.listen({ port: 0, host: '127.0.0.1' });
const token = ((await (await fetch(`${gwBase}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ email: 'capture@example.com', password: 'capture-password' }) })).json()) as { data: { access_token: string } }).data.access_token;
const dx = await startDirectus((s) => process.stderr.write(`${s}\n`));
try {
  process.stderr.write(`loaded into Directus: ${JSON.stringify(await loadLegacyData(dx, { base: gwBase, token }))}\n`);
  const answers: Record<string, unknown> = {};
  for (const q of queries) {
    const res = await fetch(`${dx.base}/items${q.path}`, { headers: { authorization: `Bearer ${dx.token}` } });
    answers[q.name] = {
      path: q.path, status: res.status, contentType: res.headers.get('content-type'),
      disposition: res.headers.get('content-disposition'), body: await res.text(),
    };
  }
  writeFileSync(ANSWERS, `${JSON.stringify({ capturedFrom: 'Directus 10.10.0 on PostgreSQL 15', at: new Date().toISOString(), answers }, null, 2)}\n`);
  process.stderr.write(`wrote ${Object.keys(answers).length} answers to ${ANSWERS}\n`);
} finally {
  await dx.stop();
  await app.close();
  await deps.close();
  await sim.close();
}
process.exit(0);

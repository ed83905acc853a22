import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, settingLookalikes } from '../../src/config/schema.js';
import { editDistance } from '../../src/config/lookalikes.js';

const problemsOf = (env: Record<string, string>): string[] => {
  try {
    loadConfig(env);
    return [];
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return [...(e as ConfigError).problems];
  }
};

describe('DATABASE_URL', () => {
  it('a scheme the gateway does not serve is a configuration problem naming the scheme, never the password', () => {
    const problems = problemsOf({ DATABASE_URL: 'mysql://u:s3cret-pw@localhost/db' });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^DATABASE_URL: mysql:\/\/ is not a store the gateway serves/);
    expect(problems.join('\n')).not.toContain('s3cret-pw');
    expect(problemsOf({ DATABASE_URL: 'Postgres://u:pw@db/x' })[0]).toMatch(/^DATABASE_URL: Postgres:\/\/ is not a store/);
  });

  it('takes PostgreSQL URLs and SQLite paths (sqlite:, file:, a path with a colon inside)', () => {
    for (const url of ['postgres://u:p@db/x', 'postgresql://db/x', './data/gateway.db', '/srv/g.db', 'sqlite:///srv/g.db', 'sqlite:g.db',
      'file:g.db', ':memory:', '/tmp/x/mysql://not-a-scheme/g.db']) {
      expect(loadConfig({ DATABASE_URL: url }).DATABASE_URL).toBe(url);
    }
  });
});

describe('variables that look like ours', () => {
  it('are named with the nearest setting; the rest of the environment is not', () => {
    const env = {
      INDEX_ENABLEDD: 'false', PROT: '9000', Port: '1', JWT_SECRETS: 'x', WEBHOOK_SECRET: '{}', SIM_SEEDS: '2',
      // an ordinary environment: none of these is taken for a typo
      HOME: '/root', PATH: '/bin', HOSTNAME: 'h', PGHOST: 'db', PGPORT: '5432', SHELL: '/bin/sh', TERM: 'xterm', USER: 'u', PWD: '/', LANG: 'C',
      NODE_OPTIONS: '', NODE_PATH: '', TZ: 'UTC', CI: '1', npm_config_port: '1', DB_HOST: 'x', HTTP_PORT: '1', API_PORT: '1', DEBUG: '1',
      PORT: '8080', INDEX_ENABLED: 'true', LEGACY_GATEWAY_KEY: 'sk_', TEST_DATABASE_URL: 'postgres://x', MALLOC_MMAP_THRESHOLD_: '1',
    };
    expect(settingLookalikes(env)).toEqual([
      { name: 'INDEX_ENABLEDD', nearest: 'INDEX_ENABLED' },
      { name: 'JWT_SECRETS', nearest: 'JWT_SECRET' },
      { name: 'PROT', nearest: 'PORT' },
      { name: 'Port', nearest: 'PORT' },
      { name: 'SIM_SEEDS', nearest: 'SIM_SEED' },
      { name: 'WEBHOOK_SECRET', nearest: 'WEBHOOK_SECRETS' },
    ]);
  });

  it('counts a swap of two neighbours as one edit', () => {
    expect(editDistance('PROT', 'PORT')).toBe(1);
    expect(editDistance('HOME', 'HOST')).toBe(2);
    expect(editDistance('', 'PORT')).toBe(4);
    expect(editDistance('INDEX_ENABLEDD', 'INDEX_ENABLED')).toBe(1);
  });
});

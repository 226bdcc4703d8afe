import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = new URL('..', import.meta.url).pathname;
const packageJson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  allowScripts: Record<string, boolean>;
  scarfSettings?: { enabled: boolean };
};

/** Every installed package (scoped ones too) and whether it has an install script. */
function installedWithInstallScripts(): string[] {
  const modules = join(root, 'node_modules');
  const names = readdirSync(modules).flatMap((entry) =>
    entry.startsWith('@')
      ? readdirSync(join(modules, entry)).map((scoped) => `${entry}/${scoped}`)
      : entry.startsWith('.')
        ? []
        : [entry],
  );
  return names.filter((name) => {
    const file = join(modules, name, 'package.json');
    if (!existsSync(file)) return false;
    const { scripts = {} } = JSON.parse(readFileSync(file, 'utf8')) as {
      scripts?: Record<string, string>;
    };
    return ['preinstall', 'install', 'postinstall'].some((s) => s in scripts);
  });
}

describe('the repository', () => {
  it('decides every dependency install script (npm ci warns about none)', () => {
    const withScripts = installedWithInstallScripts();
    // The walk sees what it claims to: esbuild (tsx's compiler) has one.
    expect(withScripts).toContain('esbuild');
    for (const name of withScripts) {
      expect(packageJson.allowScripts, `allowScripts decides ${name}`).toHaveProperty([name]);
    }
    // Download telemetry is refused, and opted out of where its script runs anyway.
    expect(packageJson.allowScripts['@scarf/scarf']).toBe(false);
    expect(packageJson.scarfSettings).toEqual({ enabled: false });
  });

  it("tracks no tool's cache", () => {
    const tracked = execFileSync('git', ['ls-files', '.schemathesis', 'schemathesis.toml'], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(tracked.trim().split('\n')).toEqual(['schemathesis.toml']);
    expect(readFileSync(join(root, '.gitignore'), 'utf8')).toMatch(/^\.schemathesis\/$/m);
  });

  it('keeps the README short: reference lives in docs/', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    expect(readme.split('\n').length).toBeLessThanOrEqual(250);
    // Every page it links to exists.
    const links = [...readme.matchAll(/\]\((docs\/[^)#]+)\)/g)].map((m) => m[1]!);
    expect(links.length).toBeGreaterThan(10);
    for (const link of links) expect(existsSync(join(root, link)), link).toBe(true);
  });
});

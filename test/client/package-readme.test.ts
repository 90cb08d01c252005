/**
 * @gis/client as a registry would serve it: `npm pack` of the workspace gives a tarball with the license,
 * the README and the type declarations that `exports` names, and every ```ts example of its README
 * type-checks under `strict` against that tarball, installed the way a game server would install it
 * (node_modules/@gis/client), not against the repository's source.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';

const root = new URL('../..', import.meta.url).pathname;

/** The bodies of the README's ```ts fenced blocks, in order. */
function tsBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
}

describe('client: the packed package and its README examples', function () {
  // npm pack runs the package build (prepack); tsc then checks the examples: seconds each on a busy machine.
  this.timeout(120_000);

  let dir: string;
  let files: string[];

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'gis-client-pack-'));
    const out = execFileSync('npm', ['pack', '-w', '@gis/client', '--pack-destination', dir, '--json'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const [packed] = JSON.parse(out) as { filename: string; files: { path: string }[] }[];
    files = packed!.files.map((f) => f.path);
    const installed = join(dir, 'node_modules', '@gis', 'client');
    mkdirSync(installed, { recursive: true });
    execFileSync('tar', ['-xzf', join(dir, packed!.filename), '-C', installed, '--strip-components=1']);
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  it('ships the MIT license, the README, the build and the declarations that exports names', () => {
    expect(files).to.include.members(['LICENSE', 'README.md', 'package.json', 'dist/index.js', 'dist/index.d.ts']);
    const pkg = JSON.parse(readFileSync(join(dir, 'node_modules/@gis/client/package.json'), 'utf8')) as {
      license: string;
      exports: { '.': { types: string; default: string } };
      repository: { directory: string };
    };
    expect(pkg.license).to.equal('MIT');
    expect(pkg.repository.directory).to.equal('packages/client');
    expect(files).to.include.members([pkg.exports['.'].types.slice(2), pkg.exports['.'].default.slice(2)]);
    expect(readFileSync(join(dir, 'node_modules/@gis/client/LICENSE'), 'utf8')).to.match(/^MIT License\n\nCopyright \(c\) \d{4} The game-integration-service authors\n/);
  });

  it('links from its README only to files inside the package (the npm page has no repository around it)', () => {
    const readme = readFileSync(join(root, 'packages/client/README.md'), 'utf8');
    const targets = [...readme.matchAll(/\]\(([^)]+)\)/g)].map((m) => m[1]!);
    expect(targets.length, 'links in the README').to.be.greaterThan(0);
    for (const t of targets) {
      expect(t, 'a relative link').to.not.match(/^[a-z]+:|^\/|\.\./);
      expect(files, `link target ${t}`).to.include(t.split('#')[0]);
    }
  });

  it('type-checks every TypeScript example of the README under strict against the packed types', () => {
    const blocks = tsBlocks(readFileSync(join(root, 'packages/client/README.md'), 'utf8'));
    expect(blocks.length, 'TypeScript examples in the README').to.be.at.least(2);
    // The examples are ES modules, as in a game server whose package.json says "type": "module".
    writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
    const names = blocks.map((code, i) => {
      const file = join(dir, `example-${i + 1}.ts`);
      writeFileSync(file, code);
      return file;
    });
    const program = ts.createProgram(names, {
      strict: true,
      noUncheckedIndexedAccess: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      lib: ['lib.es2023.d.ts'],
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      moduleDetection: ts.ModuleDetectionKind.Force,
      types: ['node'],
      typeRoots: [join(root, 'node_modules/@types')],
    });
    const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => {
      const where = d.file && d.start !== undefined ? `${d.file.fileName.slice(dir.length + 1)}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1}` : '';
      return `${where} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
    });
    expect(diagnostics).to.deep.equal([]);
    // Not vacuous: the examples did resolve the packed declarations.
    expect(program.getSourceFiles().some((f) => f.fileName.endsWith('node_modules/@gis/client/dist/index.d.ts'))).to.equal(true);
  });
});

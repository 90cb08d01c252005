import { PassThrough } from 'node:stream';
import { expect } from 'chai';
import { runCli } from '../../src/adapters/admin/cli.js';
import { UsageError, type AdminCommand } from '../../src/adapters/admin/command.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { NotFoundError } from '../../src/errors.js';
import { readSecret, retiredSecretOption, secretOptions, type SecretSource } from '../../src/adapters/admin/secret-input.js';

/** In-process runs of the dispatcher with commands that touch neither Postgres nor Redis. */
function collect(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  let text = '';
  stream.setEncoding('utf8').on('data', (d: string) => (text += d));
  return { stream, text: () => text };
}

const demo: AdminCommand[] = [
  {
    group: 'demo',
    name: 'echo',
    summary: 'Echo options back',
    options: {
      word: { type: 'string', required: true, valueName: 'WORD', description: 'a word' },
      times: { type: 'string', valueName: 'N', description: 'repeat count' },
      loud: { type: 'boolean', description: 'upper-case' },
    },
    async run(ctx) {
      const word = ctx.args.flag('loud') ? ctx.args.string('word').toUpperCase() : ctx.args.string('word');
      const times = ctx.args.int('times', 1);
      ctx.notice('a notice for humans');
      return { json: { words: Array(times).fill(word), big: 12345678901234567890n, at: new Date(0) }, text: `${word} x${times}` };
    },
  },
  {
    group: 'demo',
    name: 'fail',
    summary: 'Fail in various ways',
    options: { how: { type: 'string', required: true, description: 'domain|usage|crash' } },
    async run(ctx) {
      const how = ctx.args.string('how');
      if (how === 'domain') throw new NotFoundError('game 42 not found');
      if (how === 'usage') throw new UsageError('--how is odd');
      throw new Error('boom\n    with a second line');
    },
  },
];

/** Commands that ran (a refused destructive command must not appear here). */
const ran: string[] = [];
const TOKEN: SecretSource = { option: 'token', envVar: 'DEMO_TOKEN', label: 'demo token' };

demo.push(
  {
    group: 'demo',
    name: 'wipe',
    summary: 'Pretend to delete something',
    destructive: 'deletes everything',
    options: {},
    async run() {
      ran.push('wipe');
      return { json: { wiped: true }, text: 'wiped' };
    },
  },
  {
    group: 'demo',
    name: 'setting',
    summary: 'A yes/no setting and a secret',
    options: { on: { type: 'boolean', negatable: true, description: 'a setting' }, ...secretOptions(TOKEN) },
    retiredOptions: { ...retiredSecretOption(TOKEN), enable: 'was renamed: write --on' },
    async run(ctx) {
      return { json: { on: ctx.args.optionalFlag('on') ?? null, token: (await readSecret(ctx, TOKEN)) ?? null }, text: '' };
    },
  },
);

demo.push({
  group: 'solo',
  name: 'show',
  summary: 'The only command of its group',
  options: { id: { type: 'string', required: true, description: 'an id' } },
  async run(ctx) {
    return { json: { id: ctx.args.string('id') }, text: ctx.args.string('id') };
  },
});

async function run(argv: string[], loadConfigFn = () => loadConfig({}), io: { stdin?: string; env?: Record<string, string> } = {}) {
  const out = collect();
  const err = collect();
  const stdin = new PassThrough();
  stdin.end(io.stdin ?? '');
  const code = await runCli(argv, {
    commands: demo,
    version: '9.8.7',
    renamedGroups: { old: 'demo' },
    loadConfig: loadConfigFn,
    stdout: out.stream,
    stderr: err.stream,
    stdin,
    env: io.env ?? {},
    now: () => 0,
  });
  return { code, stdout: out.text(), stderr: err.text() };
}

describe('admin CLI dispatcher (src/adapters/admin/cli.ts)', function () {
  it('--json prints one JSON object (bigints as strings, dates as ISO) and suppresses notices', async function () {
    const r = await run(['demo', 'echo', '--word', 'hi', '--times', '2', '--json']);
    expect(r).to.deep.equal({
      code: 0,
      stdout: '{"words":["hi","hi"],"big":"12345678901234567890","at":"1970-01-01T00:00:00.000Z"}\n',
      stderr: '',
    });
    expect(await run(['--json', 'demo', 'echo', '--word', 'hi'])).to.include({ code: 0, stderr: '' });
  });

  it('runs the only command of a group without its name (admin quotas = admin quotas show)', async function () {
    expect(await run(['solo', '--id', 'x', '--json'])).to.deep.equal({ code: 0, stdout: '{"id":"x"}\n', stderr: '' });
    expect(await run(['solo', 'show', '--id', 'y', '--json'])).to.deep.equal({ code: 0, stdout: '{"id":"y"}\n', stderr: '' });
    expect((await run(['demo', '--word', 'hi'])).code).to.equal(2);
  });

  it('readable mode prints text on stdout and notices on stderr', async function () {
    expect(await run(['demo', 'echo', '--word', 'hi', '--loud'])).to.deep.equal({ code: 0, stdout: 'HI x1\n', stderr: 'a notice for humans\n' });
  });

  it('usage errors exit 2 with one stderr line and empty stdout', async function () {
    const cases = [
      [[], /no command given/],
      [['demo'], /"demo" needs a command \(one of: echo, fail, wipe, setting\)/],
      [['demo', 'nope'], /unknown command "demo nope"/],
      [['other', 'x'], /unknown command group "other"/],
      [['demo', 'echo', '--json'], /--word required; usage: gis-admin demo echo --word WORD \[--times N\] \[--loud\] \[--json\]/],
      [['demo', 'echo', '--word', 'a', '--bogus'], /--bogus/],
      [['demo', 'echo', '--word', 'a', 'positional'], /positional/],
      [['demo', 'echo', '--word', 'a', '--times', '2x'], /--times must be an integer/],
      [['demo', 'fail', '--how', 'usage', '--json'], /--how is odd/],
      [['--verbose', 'demo', 'echo'], /unexpected option --verbose/],
    ] as const;
    for (const [argv, pattern] of cases) {
      const r = await run([...argv]);
      expect(r.code, argv.join(' ')).to.equal(2);
      expect(r.stdout, argv.join(' ')).to.equal('');
      expect(r.stderr, argv.join(' ')).to.match(/^error: [^\n]*\n$/).and.match(pattern);
    }
  });

  it('domain and unexpected errors exit 1 with one stack-free line', async function () {
    expect(await run(['demo', 'fail', '--how', 'domain', '--json'])).to.deep.equal({ code: 1, stdout: '', stderr: 'error: game 42 not found [not_found]\n' });
    expect(await run(['demo', 'fail', '--how', 'crash'])).to.deep.equal({ code: 1, stdout: '', stderr: 'error: boom with a second line\n' });
  });

  it('help needs no configuration; a bad configuration is one line, exit 1', async function () {
    const broken = () => {
      throw new ConfigError(['REDIS_PREFIX must match pattern', 'PORT must be integer']);
    };
    for (const argv of [['--help'], ['help'], ['demo', '--help'], ['demo', 'echo', '--help'], ['demo', 'echo', '-h']]) {
      const r = await run(argv, broken);
      expect(r.code, argv.join(' ')).to.equal(0);
      expect(r.stdout).to.match(/^usage: gis-admin /);
      expect(r.stderr).to.equal('');
    }
    expect((await run(['demo', 'echo', '--help'], broken)).stdout).to.include('--word WORD').and.include('a word');
    expect(await run(['demo', 'echo', '--word', 'x', '--json'], broken)).to.deep.equal({
      code: 1,
      stdout: '',
      stderr: 'error: invalid configuration: REDIS_PREFIX must match pattern; PORT must be integer\n',
    });
  });

  it('--version prints the version and needs no configuration', async function () {
    const broken = () => {
      throw new ConfigError(['DATABASE_URL is required']);
    };
    expect(await run(['--version'], broken)).to.deep.equal({ code: 0, stdout: '9.8.7\n', stderr: '' });
  });

  it('yes/no options are --x / --no-x; a value after them is refused with the new spelling', async function () {
    expect((await run(['demo', 'setting', '--on', '--json'])).stdout).to.equal('{"on":true,"token":null}\n');
    expect((await run(['demo', 'setting', '--no-on', '--json'])).stdout).to.equal('{"on":false,"token":null}\n');
    expect((await run(['demo', 'setting', '--json'])).stdout).to.equal('{"on":null,"token":null}\n');
    for (const argv of [['--on', 'true'], ['--on', 'no'], ['--on=yes'], ['--no-on', 'false']]) {
      const r = await run(['demo', 'setting', ...argv, '--json']);
      expect([r.code, r.stdout], argv.join(' ')).to.deep.equal([2, '']);
      expect(r.stderr, argv.join(' ')).to.equal('error: --on takes no value: write --on for yes, --no-on for no\n');
    }
    expect(await run(['demo', 'setting', '--enable'])).to.deep.equal({ code: 2, stdout: '', stderr: 'error: --enable was renamed: write --on\n' });
    expect((await run(['demo', 'setting', '--help'])).stdout).to.include('--[no-]on');
  });

  it('a secret comes from stdin or the environment; on argv it is refused without being echoed', async function () {
    const piped = await run(['demo', 'setting', '--token-stdin', '--json'], undefined, { stdin: 's3cret\n' });
    expect(piped).to.deep.equal({ code: 0, stdout: '{"on":null,"token":"s3cret"}\n', stderr: '' });
    const fromEnv = await run(['demo', 'setting', '--json'], undefined, { env: { DEMO_TOKEN: 'from-env' } });
    expect(fromEnv).to.deep.equal({ code: 0, stdout: '{"on":null,"token":"from-env"}\n', stderr: '' });
    expect((await run(['demo', 'setting'], undefined, { env: { DEMO_TOKEN: 'from-env' } })).stderr).to.equal('demo token taken from DEMO_TOKEN\n');
    for (const argv of [['--token', 'leaked'], ['--token=leaked']]) {
      const r = await run(['demo', 'setting', ...argv]);
      expect([r.code, r.stdout]).to.deep.equal([2, '']);
      expect(r.stderr).to.include('--token-stdin').and.include('DEMO_TOKEN').and.not.include('leaked');
    }
    expect((await run(['demo', 'setting', '--token-stdin'], undefined, { stdin: '\n' })).stderr).to.match(/from stdin is empty/);
    expect((await run(['demo', 'setting', '--token-stdin'], undefined, { stdin: 'a', env: { DEMO_TOKEN: 'b' } })).stderr).to.match(/both set/);
  });

  it('a destructive command without --yes exits 2 before running; help and the list say it needs --yes', async function () {
    ran.length = 0;
    const refused = await run(['demo', 'wipe', '--json']);
    expect(refused).to.deep.equal({ code: 2, stdout: '', stderr: 'error: demo wipe deletes everything; nothing was changed: add --yes to confirm\n' });
    expect((await run(['demo', 'wipe', '--no-yes'])).code).to.equal(2);
    expect(ran).to.deep.equal([]);
    expect(await run(['demo', 'wipe', '--yes', '--json'])).to.deep.equal({ code: 0, stdout: '{"wiped":true}\n', stderr: '' });
    expect(ran).to.deep.equal(['wipe']);
    expect((await run(['demo', 'wipe', '--help'])).stdout).to.include('usage: gis-admin demo wipe --yes [--json]').and.include('confirm: this deletes everything');
    expect((await run(['demo', '--help'])).stdout).to.match(/demo wipe +Pretend to delete something \(needs --yes\)/);
    expect((await run(['solo', 'show', '--id', 'x', '--yes'])).code, '--yes only exists on destructive commands').to.equal(2);
  });

  it('a merged group is refused with the group to use', async function () {
    expect(await run(['old', 'echo', '--word', 'x'])).to.deep.equal({
      code: 2,
      stdout: '',
      stderr: 'error: the "old" group was merged into "demo": run gis-admin demo echo ...\n',
    });
  });
});

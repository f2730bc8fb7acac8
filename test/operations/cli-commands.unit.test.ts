import { expect } from 'chai';
import { Command } from 'commander';
import { buildProgram, COMMAND_MODULES } from '../../src/cli/index.js';

/** The top-level command names a program holds, each followed by its aliases (`apps` is also `clients`). */
const names = (program: Command) => program.commands.flatMap((command) => [command.name(), ...command.aliases()]);

describe('operations: each campus command loads only its own module (src/cli/index.ts)', () => {
  it('every module registers the command it is listed under', async () => {
    for (const [name, load] of Object.entries(COMMAND_MODULES)) {
      const program = new Command('campus');
      (await load())(program);
      expect(names(program), `the module listed for ${name}`).to.include(name);
    }
  });

  it('the program with every module has exactly the listed commands, in the listed order', async () => {
    expect(names(await buildProgram(['node', 'campus', '--help']))).to.deep.equal(Object.keys(COMMAND_MODULES));
  });

  it('a command names its module only (and --verbose before it changes nothing)', async () => {
    expect(names(await buildProgram(['node', 'campus', 'keys', 'issue', '--scopes', 'STUDENT_READ']))).to.deep.equal(['keys']);
    expect(names(await buildProgram(['node', 'campus', '--verbose', 'accounts', 'list']))).to.deep.equal(['accounts']);
    expect(names(await buildProgram(['node', 'campus', 'clients', 'list']))).to.deep.equal(['apps', 'clients']);
    expect(names(await buildProgram(['node', 'campus', 'restore', 'school.jsonl.gz']))).to.deep.equal(['backup', 'restore']);
  });

  it('a name that is no command loads them all, so the error can list them', async () => {
    expect(names(await buildProgram(['node', 'campus', 'studnets']))).to.deep.equal(Object.keys(COMMAND_MODULES));
  });
});

/** Every command of the tree under `command`, itself included, with its path (`campus keys issue`). */
function walk(command: Command, path = command.name()): { path: string; command: Command }[] {
  return [{ path, command }, ...command.commands.flatMap((sub) => walk(sub, `${path} ${sub.name()}`))];
}

describe('operations: every campus command answers --json and explains itself in --help (src/cli/runtime.ts)', () => {
  it('every leaf command has --json, and help text for itself and each of its options', async () => {
    const leaves = walk(await buildProgram(['node', 'campus', '--help'])).filter(({ command }) => command.commands.length === 0);
    expect(leaves.length, 'the tree was walked').to.be.greaterThan(40);
    const problems = leaves.flatMap(({ path, command }) => [
      ...(command.options.some((option) => option.long === '--json') ? [] : [`${path}: no --json`]),
      ...(command.description().trim() ? [] : [`${path}: no description`]),
      ...command.options.filter((option) => !option.description.trim()).map((option) => `${path} ${option.flags}: no help text`),
    ]);
    expect(problems).to.deep.equal([]);
  });
});

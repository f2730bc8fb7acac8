import type { Command } from 'commander';

/** `campus clients ...` and `campus accounts ...`. Placeholder until the OAuth issue lands. */
export function registerOAuthCommands(_program: Command): void {}

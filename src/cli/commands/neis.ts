import type { Command } from 'commander';

/** `campus neis sync ...`. Placeholder until the NEIS issue lands. */
export function registerNeisCommands(_program: Command): void {}

import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../src/config/index.js';

/** The scheduled backup's variables (docs/configuration.md). */
describe('operations: configuration of BACKUP_DIR, BACKUP_TIME, BACKUP_KEEP', () => {
  function problems(env: Record<string, string>): string[] {
    try {
      loadConfig(env);
    } catch (err) {
      if (err instanceof ConfigError) return err.problems;
      throw err;
    }
    return [];
  }

  it('is off by default, at 03:00 keeping 7 when BACKUP_DIR turns it on', () => {
    expect(loadConfig({}).backup).to.deep.equal({ dir: undefined, time: '03:00', keep: 7 });
    expect(loadConfig({ BACKUP_DIR: ' /var/backups/campus ', BACKUP_TIME: '23:05', BACKUP_KEEP: '30' }).backup).to.deep.equal({
      dir: '/var/backups/campus',
      time: '23:05',
      keep: 30,
    });
    // An empty variable means unset, as everywhere.
    expect(loadConfig({ BACKUP_DIR: '' }).backup.dir).to.equal(undefined);
  });

  it('names every bad value at once', () => {
    expect(problems({ BACKUP_TIME: '3:00', BACKUP_KEEP: '0' })).to.deep.equal([
      'BACKUP_TIME: must be HH:MM in 24-hour time',
      'BACKUP_KEEP: Too small: expected number to be >=1',
    ]);
    expect(problems({ BACKUP_TIME: '24:00', BACKUP_KEEP: 'many' })).to.have.length(2);
    expect(problems({ BACKUP_KEEP: '3651' })).to.deep.equal(['BACKUP_KEEP: Too big: expected number to be <=3650']);
  });
});

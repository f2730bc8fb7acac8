import type { Connection } from 'mongoose';
import { accountModel } from './account.model.js';
import { oauthClientModel } from './oauth-client.model.js';
import { oauthKeyModel } from './oauth-key.model.js';
import { oauthRecordModel } from './oauth-record.model.js';

/** The models of the OAuth domain (accounts, clients, provider artifacts, development keys). */
export function oauthModels(connection: Connection) {
  return {
    accounts: accountModel(connection),
    oauthClients: oauthClientModel(connection),
    oauthRecords: oauthRecordModel(connection),
    oauthKeys: oauthKeyModel(connection),
  };
}

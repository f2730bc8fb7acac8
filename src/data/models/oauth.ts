import type { Connection } from 'mongoose';
import { accountMfaModel } from './account-mfa.model.js';
import { accountIdClaimModel, accountModel } from './account.model.js';
import { emailCodeModel } from './email-code.model.js';
import { oauthClientModel } from './oauth-client.model.js';
import { oauthKeyModel } from './oauth-key.model.js';
import { oauthInteractionModel, oauthRecordModel } from './oauth-record.model.js';
import { passkeyChallengeModel, passkeyModel } from './passkey.model.js';

/** The models of the OAuth domain (accounts and their id counter, their passkeys and the challenges of passkey ceremonies, email codes, clients, provider artifacts and their claims, logins in progress, development keys). */
export function oauthModels(connection: Connection) {
  return {
    accounts: accountModel(connection),
    accountIdClaims: accountIdClaimModel(connection),
    accountMfa: accountMfaModel(connection),
    emailCodes: emailCodeModel(connection),
    oauthClients: oauthClientModel(connection),
    oauthRecords: oauthRecordModel(connection),
    oauthInteractions: oauthInteractionModel(connection),
    oauthKeys: oauthKeyModel(connection),
    passkeys: passkeyModel(connection),
    passkeyChallenges: passkeyChallengeModel(connection),
  };
}

// A route's credential that could not be turned into request auth: the gateway refused it (a
// cloud_a token_uri that is not an allowed token endpoint), or its token server did not mint a
// token. The caller is told only that the credential could not be used: what the key held and what
// the token server answered are the gateway's to log (the adapter does, without key or token),
// never the caller's to read — echoing them made a token_uri a way to read internal services.

export const UNUSABLE_CREDENTIAL_MESSAGE = 'the provider credential could not be used';

export class UnusableCredential extends Error {
  /** `retryable`: a token server's refusal or outage is retried as a failed connection is; a
   *  credential the gateway itself refuses is fatal (no retry can change it). */
  constructor(readonly retryable: boolean) { super(UNUSABLE_CREDENTIAL_MESSAGE); }
}

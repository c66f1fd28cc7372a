import type { Config } from '../config';
import type { SimStore } from '../models';
import type { Params } from './protocol';

export interface VendorDeps extends SimStore {
  config: Config;
}

/** One vendor endpoint: its handler returns the JSON body of a success. */
export interface VendorOperation {
  method: 'GET' | 'POST';
  path: string;
  /** false for /oauth2/token and /v3/user/register (client secret instead): everything else needs clientId, accessToken and date. */
  auth: boolean;
  /**
   * Who may call it with their token: the administrator account only (the default: every change,
   * listing and lock detail), or any account, for what concerns the caller's own key (/v3/key/get).
   */
  anyAccount?: boolean;
  /** Changes a lock's state: serialised per lock (limit checks). */
  changes: boolean;
  /** `caller`: the account whose token authorised the call (undefined when `auth` is false). */
  handle(p: Params, deps: VendorDeps, caller?: string): Promise<Record<string, unknown>>;
}

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
  /** false only for /oauth2/token: everything else needs clientId, accessToken and date. */
  auth: boolean;
  /** Changes a lock's state: serialised per lock (limit checks). */
  changes: boolean;
  handle(p: Params, deps: VendorDeps): Promise<Record<string, unknown>>;
}

import { insertRecord } from '../models';
import { checkClient } from '../oauth/token';
import { ERR, VendorError, int, reqStr } from '../vendor/protocol';
import type { VendorOperation } from '../vendor/operation';

/** The application's namespace for the accounts it registers (the vendor assigns one per app). */
const USER_PREFIX = 'sim_';

/**
 * POST /v3/user/register: an account of the application's own (client id and secret, no token),
 * e.g. one per guest, whose token then reads that guest's e-keys (/v3/key/get). The vendor answers
 * the name with the application's prefix; a name taken is 30003.
 */
export const userOperations: VendorOperation[] = [
  {
    method: 'POST',
    path: '/v3/user/register',
    auth: false,
    changes: false,
    async handle(p, deps) {
      const { models, config } = deps;
      checkClient(p, config, true);
      int(p, 'date', { required: true, min: 0 });
      const name = reqStr(p, 'username', 64);
      if (!/^[A-Za-z0-9]+$/.test(name)) throw new VendorError(ERR.INVALID_USERNAME, 'invalid username, only English character and digits is allowed');
      const password = reqStr(p, 'password');
      if (!/^[0-9a-f]{32}$/.test(password)) throw new VendorError(ERR.PASSWORD_NOT_MD5, 'password must be md5 encrypted');
      const username = `${USER_PREFIX}${name}`;
      if (!(await insertRecord(models.User, { username, passwordMd5: password }))) throw new VendorError(ERR.USER_EXISTS, 'existing registered users');
      return { username };
    },
  },
];

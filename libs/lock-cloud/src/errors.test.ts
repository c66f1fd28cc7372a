import { isPermanent, PermanentError, TransientError } from '@smartlock/messaging';
import { LockCloudError, classifyErrcode, classifyHttpStatus, classifyNetworkCode, classifyNukiStatus, isTransient } from './index';

describe('lock-cloud error classification', () => {
  it.each([
    [1, 'failed'],
    [90000, 'server'],
    [-2012, 'no_gateway'],
    [-3002, 'offline'],
    [-3036, 'offline'],
    [-3003, 'busy'],
    [-3037, 'busy'],
    [80000, 'clock'],
    [30006, 'quota'],
    [30007, 'quota'],
  ])('errcode %i is transient (%s): the worker retries', (errcode, category) => {
    expect(classifyErrcode(errcode)).toEqual({ kind: 'transient', category });
  });

  it.each([
    [-3, 'invalid_parameter'],
    [20002, 'no_permission'],
    [-2018, 'no_permission'],
    [-4043, 'unsupported'],
    [-2025, 'frozen'],
    [-3009, 'storage_full'],
    [-4056, 'storage_full'],
    [10001, 'auth'],
    [10007, 'auth'],
    [-1008, 'not_found'],
    [-3007, 'duplicate'],
    [-999999, 'unknown'],
  ])('errcode %i is permanent (%s): the event fails without retries', (errcode, category) => {
    expect(classifyErrcode(errcode)).toEqual({ kind: 'permanent', category });
  });

  it('classifies HTTP statuses: 5xx, 429 and 408 transient, other 4xx permanent', () => {
    for (const s of [500, 502, 503, 504, 429, 408]) expect(classifyHttpStatus(s).kind).toBe('transient');
    for (const s of [400, 401, 403, 404, 405, 413]) expect(classifyHttpStatus(s).kind).toBe('permanent');
  });

  it.each([
    [400, 'permanent', 'invalid_parameter'],
    [401, 'permanent', 'auth'],
    [403, 'permanent', 'no_permission'],
    [404, 'permanent', 'not_found'],
    [405, 'permanent', 'unsupported'],
    [409, 'permanent', 'duplicate'],
    [410, 'permanent', 'http'],
    [423, 'transient', 'busy'],
    [429, 'transient', 'http'],
    [500, 'transient', 'http'],
    [503, 'transient', 'http'],
  ])("Nuki HTTP %i is %s (%s), in the classes TTLock's errcodes use", (status, kind, category) => {
    expect(classifyNukiStatus(status)).toEqual({ kind, category });
  });

  it('classifies timeouts and network errors as transient', () => {
    expect(classifyNetworkCode('ECONNABORTED')).toEqual({ kind: 'transient', category: 'timeout' });
    expect(classifyNetworkCode('ETIMEDOUT')).toEqual({ kind: 'transient', category: 'timeout' });
    expect(classifyNetworkCode('ECONNREFUSED')).toEqual({ kind: 'transient', category: 'network' });
    expect(classifyNetworkCode(undefined)).toEqual({ kind: 'transient', category: 'network' });
  });

  it('agrees with libs/messaging: permanent LockCloudErrors are isPermanent(), transient ones are retried', () => {
    const perm = new LockCloudError('x', { kind: 'permanent', category: 'storage_full', operation: '/v3/keyboardPwd/add', errcode: -3009 });
    const trans = new LockCloudError('x', { kind: 'transient', category: 'offline', operation: '/v3/key/send', errcode: -3002 });
    expect(isPermanent(perm)).toBe(true);
    expect(isTransient(perm)).toBe(false);
    expect(isPermanent(trans)).toBe(false);
    expect(isTransient(trans)).toBe(true);
    expect(isTransient(new PermanentError('room not found'))).toBe(false);
    expect(isTransient(new TransientError('x'))).toBe(true);
    expect(isTransient(new Error('anything else'))).toBe(true);
  });
});

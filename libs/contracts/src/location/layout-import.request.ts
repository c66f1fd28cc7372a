import Joi from 'joi';
import { siteTimeFields } from './site-time';
import { vendorLockOf } from '../locks/lock-id';

/** A layout node's name: at most this many characters. */
export const NAME_MAX = 100;

/** Why a node name is refused, or undefined. Control characters are refused because they separate sort keys. */
export function nameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string') return 'name must be a string';
  if (name.length === 0 || name.length > NAME_MAX) return `name must be 1 to ${NAME_MAX} characters`;
  if (name.trim() !== name) return 'name must not start or end with whitespace';
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'name must not contain control characters'; // eslint-disable-line no-control-regex
  return undefined;
}

const name = Joi.string()
  .required()
  .custom((value: string, helpers) => {
    const problem = nameProblem(value);
    return problem ? helpers.message({ custom: problem }) : value;
  })
  .description(`1 to ${NAME_MAX} characters, no leading or trailing whitespace, no control characters; unique among siblings ignoring case`);
const lock = Joi.object({
  lock_id: Joi.alternatives(Joi.string().min(1).max(64), Joi.number().integer().min(0)).required(),
  lock_mac: Joi.string().min(1).max(64).description("required for a TTLock lock; another vendor's lock (`nuki:…`) may leave it out"),
  name: Joi.string().max(100).allow(null),
  provider: Joi.string().max(50).allow(null),
  // Another vendor's lock (`nuki:…`, ADR 0109) may come without a MAC: the vendor gives none.
}).custom((value: { lock_id: string | number; lock_mac?: string }, helpers) =>
  value.lock_mac === undefined && vendorLockOf(String(value.lock_id)).provider === 'ttlock'
    ? helpers.message({ custom: 'lock_mac is required for a TTLock lock' })
    : value,
);
const locks = Joi.array().items(lock);
const bed = Joi.object({ name, locks });
const room = Joi.object({ name, locks, beds: Joi.array().items(bed) });
const floor = Joi.object({ name, rooms: Joi.array().items(room) });
const building = Joi.object({ name, floors: Joi.array().items(floor) });
const site = Joi.object({ name, ...siteTimeFields, buildings: Joi.array().items(building) });

/** `PUT /admin/v1/companies/:companyId/layout`: the whole layout, matched to the stored one by names. */
export const layoutImportSchema = Joi.object({ sites: Joi.array().items(site).required() }).required();

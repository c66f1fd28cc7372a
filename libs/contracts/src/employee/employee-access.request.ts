import Joi from 'joi';
import { ACCESS_TYPES, AccessType, DEFAULT_ACCESS_TYPE } from '../booking/actions';

/** The levels of an employee access rule (SPEC "Create access for an employee"). */
export const RULE_LEVELS = ['site_id', 'building_id', 'floor_id', 'room_id', 'bed_id'] as const;
export type RuleLevel = (typeof RULE_LEVELS)[number];
export type AccessRule = Partial<Record<RuleLevel, string>>;

export interface EmployeeAccessInput {
  ref_id: string;
  type: 'PERMANENT' | 'TIMED';
  access_type: AccessType;
  startDate?: string;
  endDate?: string;
  contact?: string;
  emp_id?: string;
  access_locations: AccessRule[];
}

const OBJECT_ID = /^[0-9a-fA-F]{24}$/;
const idOrWildcard = Joi.alternatives()
  .try(Joi.string().valid('*'), Joi.string().pattern(OBJECT_ID))
  .messages({ 'alternatives.match': '{{#label}} must be an ObjectId or "*"' });

const rule = Joi.object(Object.fromEntries(RULE_LEVELS.map((l) => [l, idOrWildcard])))
  .min(1)
  .messages({ 'object.min': '{{#label}} must name at least one of site_id, building_id, floor_id, room_id, bed_id' });

const PHONE = /^\+?[0-9][0-9 ().-]{5,19}$/;

/** SPEC "Create access for an employee" body (access-api validates with `convert: false`: a number is not a string). */
export const employeeAccessSchema = Joi.object<EmployeeAccessInput>({
  ref_id: Joi.string()
    .pattern(/^[A-Za-z0-9]{8,12}$/)
    .required()
    .messages({ 'string.pattern.base': '{{#label}} must be 8 to 12 alphanumeric characters' }),
  type: Joi.string().valid('PERMANENT', 'TIMED').required(),
  access_type: Joi.string()
    .valid(...ACCESS_TYPES)
    .default(DEFAULT_ACCESS_TYPE),
  startDate: Joi.when('type', {
    is: 'TIMED',
    then: Joi.string().isoDate().required(),
    otherwise: Joi.forbidden().messages({ 'any.unknown': '{{#label}} is set automatically for PERMANENT' }),
  }),
  endDate: Joi.when('type', {
    is: 'TIMED',
    then: Joi.string().isoDate().required(),
    otherwise: Joi.forbidden().messages({ 'any.unknown': '{{#label}} is set automatically for PERMANENT' }),
  }),
  contact: Joi.alternatives()
    .try(Joi.string().email({ tlds: false }).max(254), Joi.string().pattern(PHONE))
    .messages({ 'alternatives.match': '{{#label}} must be an e-mail address or a phone number' }),
  emp_id: Joi.string().pattern(OBJECT_ID).messages({ 'string.pattern.base': '{{#label}} must be an ObjectId (24 hexadecimal characters)' }),
  access_locations: Joi.array().items(rule).min(1).max(100).required(),
})
  .or('emp_id', 'contact')
  .messages({ 'object.missing': 'at least one of emp_id and contact is required' });

export interface EmployeeListQuery {
  page: number;
  limit: number;
  employee_id?: string;
  status?: 'active' | 'revoked';
}

/** Query of `GET /api/v3/access/employee` (converted: query values are strings). */
export const employeeListQuerySchema = Joi.object<EmployeeListQuery>({
  page: Joi.number().integer().min(1).default(1),
  limit: Joi.number().integer().min(1).max(100).default(20),
  employee_id: Joi.string().pattern(OBJECT_ID),
  status: Joi.string().valid('active', 'revoked'),
});

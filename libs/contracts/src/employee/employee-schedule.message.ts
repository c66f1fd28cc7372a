import Joi from 'joi';
import { ACCESS_TYPES, AccessType } from '../booking/actions';

/**
 * `employee.schedules`, routing key = `type`: an employee access schedule as access-api resolved it
 * against its layout replica. `locations` is the full, current set (not a delta): the worker converges
 * the locks to it, so a re-publish after a layout change (a room added under a `*` rule) is just
 * another `schedule.upserted` with a higher `version`. The worker reports progress as access.events
 * with `reference_id` = the schedule's `ref_id`.
 */
export interface EmployeeScheduleMessage {
  type: 'schedule.upserted' | 'schedule.revoked';
  company_id: string;
  schedule_id: string;
  ref_id: string;
  employee_id: string | null;
  contact: string | null;
  schedule_type: 'PERMANENT' | 'TIMED';
  access_types: AccessType[];
  start: string;
  end: string;
  /**
   * A TIMED schedule's startDate / endDate sent as a date alone (YYYY-MM-DD), else null: the worker
   * covers whole local days of each lock's site (00:00 of start_day to the end of end_day) instead
   * of `start` / `end`.
   */
  start_day?: string | null;
  end_day?: string | null;
  locations: { site_id: string; room_id: string; bed_id: string | null }[];
  /** Grows with every change of this schedule: older messages are ignored. */
  version: number;
  occurred_at: string;
  correlation_id: string;
}

export const employeeScheduleMessageSchema = Joi.object<EmployeeScheduleMessage>({
  type: Joi.string().valid('schedule.upserted', 'schedule.revoked').required(),
  company_id: Joi.string().required(),
  schedule_id: Joi.string().required(),
  ref_id: Joi.string().required(),
  employee_id: Joi.string().allow(null).required(),
  contact: Joi.string().allow(null).required(),
  schedule_type: Joi.string().valid('PERMANENT', 'TIMED').required(),
  access_types: Joi.array()
    .items(Joi.string().valid(...ACCESS_TYPES))
    .min(1)
    .required(),
  start: Joi.string().isoDate().required(),
  end: Joi.string().isoDate().required(),
  start_day: Joi.string()
    .pattern(/^\d{4}-\d{2}-\d{2}$/)
    .allow(null),
  end_day: Joi.string()
    .pattern(/^\d{4}-\d{2}-\d{2}$/)
    .allow(null),
  locations: Joi.array()
    .items(Joi.object({ site_id: Joi.string().required(), room_id: Joi.string().required(), bed_id: Joi.string().allow(null).required() }))
    .required(),
  version: Joi.number().integer().min(1).required(),
  occurred_at: Joi.string().isoDate().required(),
  correlation_id: Joi.string().required(),
});

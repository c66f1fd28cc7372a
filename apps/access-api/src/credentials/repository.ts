import { AccessLog, AccessLogDoc, Subject, openEntry } from './access-log.schema';
import { AccessView, foldAccess } from './fold';

/** The company id is mandatory: a read that forgets tenant scoping does not compile. */
export interface AccessQuery {
  companyId: string;
  referenceId: string;
  subject?: Subject;
}

/** A reference's log entries, opened, in order of version. */
export async function accessEntries(log: AccessLog, q: AccessQuery): Promise<AccessLogDoc[]> {
  const entries = await log.model
    .find({ company_id: q.companyId, subject: q.subject ?? 'booking', reference_id: q.referenceId })
    .sort({ sequence: 1 })
    .lean<AccessLogDoc[]>();
  return entries.map((e) => openEntry(log, e));
}

export async function findAccess(log: AccessLog, q: AccessQuery): Promise<AccessView | null> {
  return foldAccess(q.referenceId, await accessEntries(log, q));
}

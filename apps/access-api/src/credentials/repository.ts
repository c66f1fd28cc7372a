import type { Model } from '@smartlock/db';
import type { AccessLogDoc, Subject } from './access-log.schema';
import { AccessView, foldAccess } from './fold';

/** The company id is mandatory: a read that forgets tenant scoping does not compile. */
export interface AccessQuery {
  companyId: string;
  referenceId: string;
  subject?: Subject;
}

export async function findAccess(model: Model<AccessLogDoc>, q: AccessQuery): Promise<AccessView | null> {
  const entries = await model
    .find({ company_id: q.companyId, subject: q.subject ?? 'booking', reference_id: q.referenceId })
    .sort({ sequence: 1 })
    .lean<AccessLogDoc[]>();
  return foldAccess(q.referenceId, entries);
}

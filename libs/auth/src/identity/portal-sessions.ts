import { Types, unlessHeld } from '@smartlock/db';
import { generatePortalSecret } from '../portal';
import { revokeRecord } from './credentials';
import type { IdentityModels, PortalLinkDoc, PortalSessionDoc } from './models';

/** What a new portal session is scoped to (`company_id` null: an operator's on-call session). */
export interface NewPortalSession {
  company_id: Types.ObjectId | null;
  capabilities: string[];
  link_id: Types.ObjectId;
  issued_to: string | null;
  expires_at: Date;
}

/** What a portal link is stored with (`company_id` null: an operator's on-call link); only sha256 of its secret. */
type NewPortalLink = Pick<PortalLinkDoc, 'company_id' | 'capabilities' | 'hash' | 'expires_at' | 'issued_to'>;

/**
 * Stores a portal session and returns it with its cookie value (`<_id>.<secret>`, only sha256 of the
 * secret stored). A second session of the same link fails on the unique link_id (a duplicate key).
 */
export async function createPortalSession(
  models: Pick<IdentityModels, 'PortalSession'>,
  fields: NewPortalSession,
): Promise<{ session: PortalSessionDoc; cookie: string }> {
  const { secret, hash } = generatePortalSecret();
  const session = (await models.PortalSession.create({ ...fields, hash })).toObject() as PortalSessionDoc;
  return { session, cookie: `${String(session._id)}.${secret}` };
}

/** Portal links and the sessions they open, each read by `_id` (the credential `<_id>.<secret>` names it). */
export function portalStore(m: IdentityModels) {
  return {
    issuePortalLink: async (link: NewPortalLink): Promise<PortalLinkDoc> => (await m.PortalLink.create(link)).toObject(),

    portalLink: (id: Types.ObjectId | string) => m.PortalLink.findById(id).lean<PortalLinkDoc>().exec(),

    /** Whether the link is revoked, as stored now. */
    portalLinkRevoked: async (id: Types.ObjectId): Promise<boolean> => Boolean((await m.PortalLink.findById(id, { revoked_at: 1 }).lean())?.revoked_at),

    /**
     * Records the link opened. What makes it single-use is the session's unique link_id, not this
     * field (a read-then-write, which two openers could both make): it is what the operator sees.
     */
    markPortalLinkUsed: async (id: Types.ObjectId, at: Date): Promise<void> => {
      await m.PortalLink.updateOne({ _id: id }, { $set: { used_at: at } });
    },

    revokePortalLink: (id: Types.ObjectId, at: Date) => revokeRecord(m, m.PortalLink, id, at),

    /** A session of the link with its cookie; null when the link has opened one already (the insert into the unique link_id decides). */
    openPortalSession: (fields: NewPortalSession) => unlessHeld(createPortalSession(m, fields)),

    portalSession: (id: Types.ObjectId | string) => m.PortalSession.findById(id).lean<PortalSessionDoc>().exec(),

    /** The company's latest 500 sessions, newest first. */
    portalSessionsOf: (companyId: Types.ObjectId) =>
      m.PortalSession.find({ company_id: companyId }).sort({ created_at: -1, _id: -1 }).limit(500).lean<PortalSessionDoc[]>().exec(),

    /** The id of the session the link opened, if any. */
    sessionOfLink: async (linkId: Types.ObjectId): Promise<Types.ObjectId | null> =>
      (await m.PortalSession.findOne({ link_id: linkId }, { _id: 1 }).lean())?._id ?? null,

    revokePortalSession: (id: Types.ObjectId, at: Date) => revokeRecord(m, m.PortalSession, id, at),
  };
}

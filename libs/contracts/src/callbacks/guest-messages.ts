/**
 * What became of a message to a guest (one per access event and channel; the callback-dispatcher's
 * record, shown on the portal's booking page): `pending` (being sent, or retried after a transient
 * error), `sent`, `failed` (refused: an address or number the provider will not take, no TLS to the
 * relay), `dead` (retries ran out), `not_sent` (never attempted, for a NotSentReason).
 */
export const GUEST_MESSAGE_STATUSES = ['pending', 'sent', 'failed', 'dead', 'not_sent'] as const;
export type GuestMessageStatus = (typeof GUEST_MESSAGE_STATUSES)[number];

/**
 * Why a guest message was not sent: the booking carried neither an e-mail address nor a phone
 * number (`no_contact`, recorded once per access event without a channel), the service has no
 * relay or provider for its channel (`channel_not_configured`), or the company's hourly quota of
 * the channel was used up (`rate_limited`).
 */
export const GUEST_MESSAGE_NOT_SENT_REASONS = ['no_contact', 'channel_not_configured', 'rate_limited'] as const;
export type GuestMessageNotSentReason = (typeof GUEST_MESSAGE_NOT_SENT_REASONS)[number];

export const GUEST_CHANNELS = ['email', 'sms'] as const;
export type GuestChannel = (typeof GUEST_CHANNELS)[number];

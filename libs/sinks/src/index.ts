// Local stand-ins for the guest-message providers (a mail relay, an SMS API): real servers that keep
// what they receive. The tests use them, and `npm start` runs them in the lock-cloud simulator,
// which shows what a guest would get (development only).
export { startSmtpSink } from './smtp-sink';
export type { ReceivedMail, SmtpSink } from './smtp-sink';
export { smsApi, startSmsApi } from './sms-api';
export type { ReceivedSms, SmsApi } from './sms-api';

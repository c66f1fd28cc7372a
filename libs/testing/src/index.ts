export * from './infra';
export { captureLogger } from './logs';
export { launchApp, freePort } from './launcher';
export type { LaunchedApp } from './launcher';
export { startCallbackReceiver, startSmtpSink, startSmsStub } from './receivers';
export type { CallbackReceiver, ReceivedCallback, SmtpSink, SmsStub, ReceivedMail, ReceivedSms } from './receivers';
export { launchSystem, SYSTEM_ADMIN_TOKEN, SYSTEM_SECRETS_KEY } from './system';
export type { System, SystemOptions } from './system';
export { credentialRecord } from './factories';

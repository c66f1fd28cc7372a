export { createBroker, safeUrl } from './broker';
export type { Broker, BrokerOptions, ConsumeOptions, DeadLetterInfo, Handler, MessageContext, PublishOptions } from './broker';
export { PermanentError, TransientError, BrokerUnavailableError, PublishError, isPermanent } from './errors';
export * from './topology';
export { sendAllToQueue } from './send-all';
export { SIGNATURE_HEADER, signBody, verifyBody } from './signature';
export { APP_BROKER_ACCESS, brokerDefinitions, brokerPermissions } from './broker-users';
export type { AppBrokerAccess, BrokerApp } from './broker-users';

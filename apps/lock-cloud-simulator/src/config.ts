import { BaseConfig, Joi, baseEnv, loadConfig, portEnv } from '@smartlock/config';

export interface Config extends BaseConfig {
  PORT: number;
  MONGO_DB: string;
  SIM_CLIENT_ID: string;
  SIM_CLIENT_SECRET: string;
  SIM_USERNAME: string;
  SIM_PASSWORD: string;
  SIM_TOKEN_TTL_MS: number;
  SIM_LATENCY_MS: number;
  SIM_NUKI_CONFIRM_DELAY_MS: number;
  SIM_GUEST_SINK: boolean;
  SIM_SMTP_PORT: number;
}

/** The account the simulator accepts: development defaults (the same as libs/lock-cloud's), required elsewhere. */
const devDefault = (value: string) =>
  Joi.string()
    .min(1)
    .when('NODE_ENV', { is: Joi.valid('development', 'test').required(), then: Joi.string().min(1).default(value), otherwise: Joi.required() });

export const configSchema = Joi.object<Config>({
  ...baseEnv,
  ...portEnv(8086),
  MONGO_DB: Joi.string().default('smartlock_lock_sim').description("the app's own database (its slice)"),
  SIM_CLIENT_ID: devDefault('sim-client-id').description('the client id of the one application the simulator accepts'),
  SIM_CLIENT_SECRET: devDefault('sim-client-secret').description("that application's client secret"),
  SIM_USERNAME: devDefault('sim-admin').description('the administrator account the simulator accepts'),
  SIM_PASSWORD: devDefault('sim-password').description("that account's password (clients send its MD5)"),
  // TTLock's tokens live 90 days; tests shorten it to exercise the refresh.
  SIM_TOKEN_TTL_MS: Joi.number()
    .integer()
    .min(1)
    .default(90 * 24 * 3600 * 1000)
    .description('access token lifetime (90 days, as the vendor; tests shorten it to exercise the refresh)'),
  SIM_LATENCY_MS: Joi.number().integer().min(0).default(0).description('latency added to every vendor call at start (see `PUT /sim/latency`)'),
  SIM_NUKI_CONFIRM_DELAY_MS: Joi.number()
    .integer()
    .min(0)
    .default(1500)
    .description(
      'how long a Nuki keypad code (or its change) takes to reach an online lock after the Web API accepted it (a lock may say otherwise: `PUT /sim/nuki/smartlocks/:id`)',
    ),
  // Development only: a demo's guests are not real. Refused in production, where no simulator runs.
  SIM_GUEST_SINK: Joi.boolean()
    .default(false)
    .when('NODE_ENV', { is: 'production', then: Joi.valid(false).messages({ 'any.only': 'SIM_GUEST_SINK is for development only' }) })
    .description(
      'keep the guest e-mails and SMS the callback-dispatcher sends (a mail relay on 127.0.0.1:`SIM_SMTP_PORT`, a Twilio-style SMS API under `/sms` of this port) and show them at `/sim/guest-messages`; `npm start` turns it on and points the dispatcher at it; refused in production',
    ),
  SIM_SMTP_PORT: Joi.number().port().default(2525).description('the port of that mail relay (plain SMTP on loopback; with `SIM_GUEST_SINK`)'),
});

export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return loadConfig(configSchema, env);
}

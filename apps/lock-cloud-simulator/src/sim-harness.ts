import axios, { AxiosInstance } from 'axios';
import type { Logger } from '@smartlock/observability';
import type { RunningService } from '@smartlock/http';
import { start } from './app';
import { Config, readConfig } from './config';
import { SimModels, simModels } from './models';

export interface RunningSimulator {
  service: RunningService;
  url: string;
  /** JSON client of the /sim controls; never throws on a status. */
  sim: AxiosInstance;
  models: SimModels;
  config: Config;
  stop(): Promise<void>;
}

/**
 * The simulator in-process on a free port with its own database, for this app's tests and for the
 * worker's (which import it only from tests). Variables as the app reads them (SIM_TOKEN_TTL_MS...).
 */
export async function startSimulator(opts: { mongoUrl: string; dbName: string; logger: Logger; env?: Record<string, string> }): Promise<RunningSimulator> {
  const config = readConfig({ NODE_ENV: 'test', PORT: '0', MONGO_URL: opts.mongoUrl, MONGO_DB: opts.dbName, SHUTDOWN_TIMEOUT_MS: '1000', ...opts.env });
  const service = await start(config, opts.logger);
  const sim = axios.create({ baseURL: `${service.url}/sim`, validateStatus: () => true, timeout: 10_000 });
  return {
    service,
    url: service.url,
    sim,
    models: simModels(service.ctx.db),
    config,
    stop: () => service.stop(),
  };
}

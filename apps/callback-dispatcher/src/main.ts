import { runMain, serviceLogger } from '@smartlock/http';
import { SERVICE, start } from './app';
import { readConfig } from './config';

runMain(SERVICE, async () => {
  const config = readConfig();
  return start(config, serviceLogger(SERVICE, config));
});

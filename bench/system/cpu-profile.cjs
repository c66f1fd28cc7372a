'use strict';
// Preloaded into every app by `BENCH_PROFILE=<rate> npm run bench:system` (NODE_OPTIONS=--require;
// Node 20 refuses --cpu-prof there). The first SIGUSR2 starts V8's sampling profiler, the next one
// writes <BENCH_PROFILE_DIR>/<pid>.cpuprofile: the profile covers the measured step only, not
// start-up or warm-up.
const inspector = require('node:inspector');
const fs = require('node:fs');
const path = require('node:path');

const session = new inspector.Session();
session.connect();
let running = false;
process.on('SIGUSR2', () => {
  running = !running;
  if (running) {
    session.post('Profiler.enable', () => session.post('Profiler.start'));
    return;
  }
  session.post('Profiler.stop', (err, res) => {
    if (!err) fs.writeFileSync(path.join(process.env.BENCH_PROFILE_DIR, `${process.pid}.cpuprofile`), JSON.stringify(res.profile));
  });
});

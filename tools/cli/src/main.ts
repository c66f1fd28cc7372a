import { run } from './cli';

// The admin API from a terminal: `node dist/tools/cli.js --help`.
run(process.argv.slice(2), process.env, {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
}).then(
  (code) => {
    process.exitCode = code;
  },
  (err: Error) => {
    process.stderr.write(`error: ${err.message}\n`);
    process.exitCode = 1;
  },
);

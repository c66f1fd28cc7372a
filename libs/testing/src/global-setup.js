// Runs once per jest process. Infrastructure is brought up once per test run by scripts/test.sh
// (scripts/infra.sh); here we only load what it wrote and fail fast, naming the fix, if it is down.
const fs = require('fs');
const net = require('net');
const path = require('path');

function loadInfraEnv() {
  const file = path.join(__dirname, '../../../.data/infra.env');
  if (!fs.existsSync(file)) return;
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const m = line.match(/^([A-Z_]+)=(.*)$/);
    if (m && !process.env[m[1]]) process.env[m[1]] = m[2];
  }
}

function reachable(host, port) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port, timeout: 2000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

module.exports = async () => {
  loadInfraEnv();
  const mongo = new URL(process.env.MONGO_URL || 'mongodb://127.0.0.1:27017');
  const amqp = new URL(process.env.AMQP_URL || 'amqp://127.0.0.1:5672');
  const down = [];
  if (!(await reachable(amqp.hostname, Number(amqp.port || 5672)))) down.push(`RabbitMQ at ${amqp.host}`);
  if (!(await reachable(mongo.hostname, Number(mongo.port || 27017)))) down.push(`MongoDB-wire server at ${mongo.host}`);
  if (down.length) throw new Error(`Test infrastructure is down (${down.join(', ')}): run \`npm run infra\` or \`npm test\`.`);
};
module.exports.loadInfraEnv = loadInfraEnv;

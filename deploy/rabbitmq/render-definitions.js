#!/usr/bin/env node
// Renders the broker's definitions for deployment: deploy/rabbitmq/definitions.json (users and
// permissions, generated from libs/messaging's topology, no secrets) plus each user's password hash
// from the environment, and an administrator for operators. No guest user is created.
//
//   RABBITMQ_PASSWORD_<APP> (e.g. RABBITMQ_PASSWORD_INGEST_GATEWAY)  one per app user, required
//   RABBITMQ_ADMIN_USER (default admin), RABBITMQ_ADMIN_PASSWORD      the management user, required
//
//   node deploy/rabbitmq/render-definitions.js <out.json>
'use strict';
const { createHash, randomBytes } = require('node:crypto');
const { readFileSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

/** RabbitMQ's rabbit_password_hashing_sha256: base64(salt ++ sha256(salt ++ password)), a 4-byte salt. */
function hashPassword(password) {
  const salt = randomBytes(4);
  return Buffer.concat([
    salt,
    createHash('sha256')
      .update(Buffer.concat([salt, Buffer.from(password, 'utf8')]))
      .digest(),
  ]).toString('base64');
}

const passwordVariable = (user) => `RABBITMQ_PASSWORD_${user.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;

function render(definitions, env) {
  const missing = [];
  const need = (name) => {
    const value = env[name];
    if (!value) missing.push(name);
    return value ?? '';
  };
  const adminName = env.RABBITMQ_ADMIN_USER || 'admin';
  const adminPassword = need('RABBITMQ_ADMIN_PASSWORD');
  const users = definitions.users.map((u) => ({
    name: u.name,
    password_hash: hashPassword(need(passwordVariable(u.name))),
    hashing_algorithm: 'rabbit_password_hashing_sha256',
    tags: u.tags,
  }));
  if (missing.length) throw new Error(`missing broker passwords: ${missing.join(', ')}`);
  users.push({ name: adminName, password_hash: hashPassword(adminPassword), hashing_algorithm: 'rabbit_password_hashing_sha256', tags: ['administrator'] });
  const permissions = [
    ...definitions.permissions,
    ...definitions.vhosts.map((v) => ({ user: adminName, vhost: v.name, configure: '.*', write: '.*', read: '.*' })),
  ];
  return { ...definitions, users, permissions };
}

module.exports = { hashPassword, passwordVariable, render };

if (require.main === module) {
  const out = process.argv[2];
  if (!out) {
    console.error('usage: node deploy/rabbitmq/render-definitions.js <out.json>');
    process.exit(2);
  }
  try {
    const definitions = JSON.parse(readFileSync(join(__dirname, 'definitions.json'), 'utf8'));
    writeFileSync(out, JSON.stringify(render(definitions, process.env), null, 2));
    console.log(`broker definitions written to ${out}`);
  } catch (err) {
    console.error(err.message);
    process.exit(1);
  }
}

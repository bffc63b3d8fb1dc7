// node-redis's cluster client (createCluster) against three `rocksketch serve
// --cluster-enabled` primaries whose topology this script pushes as Kvrocks' controller
// would (CLUSTERX SETNODES). A workload over a thousand keys of every family must get
// the answers a single non-cluster server gives. Usage: node cluster.mjs SINGLE P1 P2 P3
import { createClient, createCluster } from 'redis';

const [single, ...ports] = process.argv.slice(2).map(Number);
const shards = [[0, 5460], [5461, 10922], [10923, 16383]];

function check(ok, what) {
  if (!ok) {
    console.error(`node-redis cluster: ${what}`);
    process.exit(1);
  }
}

const nodes = ports
  .map((port, i) => `${String(i + 1).repeat(40)} 127.0.0.1 ${port} master - ${shards[i][0]}-${shards[i][1]}`)
  .join('\n');
for (const port of ports) {
  const admin = createClient({ url: `redis://127.0.0.1:${port}` });
  await admin.connect();
  check((await admin.sendCommand(['CLUSTERX', 'SETNODES', nodes, '1'])) === 'OK', `SETNODES on ${port}`);
  await admin.quit();
}

function workload() {
  const out = [];
  for (let k = 0; k < 1000; k++) {
    const key = `key:${k}`;
    const item = `i${(k * 7) % 13}`;
    switch (k % 4) {
      case 0: out.push(['BF.ADD', key, item], ['BF.ADD', key, item], ['BF.EXISTS', key, 'other']); break;
      case 1: out.push(['CMS.INITBYDIM', key, '100', '3'], ['CMS.INCRBY', key, item, '4'], ['CMS.QUERY', key, item]); break;
      case 2: out.push(['CF.ADD', key, item], ['CF.COUNT', key, item]); break;
      default: out.push(['PFADD', key, item, 'x'], ['PFCOUNT', key]);
    }
  }
  for (let t = 0; t < 20; t++) {
    out.push(['PFADD', `{t${t}}a`, 'x'], ['PFADD', `{t${t}}b`, 'y'], ['PFCOUNT', `{t${t}}a`, `{t${t}}b`]);
  }
  return out;
}

async function run(send) {
  const replies = [];
  for (const command of workload()) {
    try {
      replies.push(JSON.stringify(await send(command)));
    } catch (e) {
      replies.push(`error: ${e.message}`);
    }
  }
  return replies;
}

const one = createClient({ url: `redis://127.0.0.1:${single}` });
await one.connect();
await one.flushAll();
const want = await run((command) => one.sendCommand(command));

const cluster = createCluster({ rootNodes: [{ url: `redis://127.0.0.1:${ports[0]}` }] });
await cluster.connect();
// sendCommand(firstKey, isReadonly, args): the client routes by the key's slot.
const got = await run((command) => cluster.sendCommand(command[1], false, command));
for (let i = 0; i < want.length; i++) {
  check(got[i] === want[i], `command ${i}: got ${got[i]}, want ${want[i]}`);
}
for (const port of ports) {
  const node = createClient({ url: `redis://127.0.0.1:${port}` });
  await node.connect();
  const size = await node.dbSize();
  check(size > 0, `the node on ${port} holds no key`);
  await node.quit();
}
await cluster.quit();
await one.quit();
console.log(`node-redis cluster: ${want.length} answers as one server's, over ${ports.length} nodes`);

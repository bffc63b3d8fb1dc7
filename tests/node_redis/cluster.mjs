// node-redis's cluster client (createCluster) against three `rocksketch serve
// --cluster-enabled` primaries whose topology this script pushes as Kvrocks' controller
// would (CLUSTERX SETNODES). A workload over a thousand keys of every family must get
// the answers a single non-cluster server gives. Then a slot migrates (CLUSTERX MIGRATE)
// while node-redis writers increment counters in it: node-redis follows ASK and MOVED
// but does not retry TRYAGAIN, so every write must be answered (the hand-over's pause
// holds writes rather than refusing them) and every increment be on the target.
// Usage: node cluster.mjs SINGLE P1 P2 P3
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

// A slot migrated under node-redis writers.
const admin = (port) => {
  const c = createClient({ url: `redis://127.0.0.1:${port}` });
  return c.connect().then(() => c);
};
const first = await admin(ports[0]);
const slot = Number(await first.sendCommand(['CLUSTER', 'KEYSLOT', '{mig}']));
await first.quit();
const from = shards.findIndex(([a, b]) => a <= slot && slot <= b);
const to = (from + 1) % ports.length;
let stop = false;
const writers = [0, 1, 2, 3].map(async (w) => {
  const key = `{mig}w${w}`;
  await cluster.sendCommand(key, false, ['CMS.INITBYDIM', key, '100', '3']);
  let acked = 0;
  while (!stop) {
    const counts = await cluster.sendCommand(key, false, ['CMS.INCRBY', key, 'x', '1']);
    acked += 1;
    check(Number(counts[0]) === acked, `writer ${w}: ${counts} after ${acked}`);
  }
  return [key, acked];
});
await new Promise((r) => setTimeout(r, 300));
const source = await admin(ports[from]);
check((await source.sendCommand(['CLUSTERX', 'MIGRATE', String(slot), String(to + 1).repeat(40)])) === 'OK', 'MIGRATE');
for (let i = 0; ; i++) {
  const info = String(await source.sendCommand(['CLUSTER', 'INFO']));
  if (info.includes('migrating_state: success')) break;
  check(!info.includes('migrating_state: fail') && i < 3000, `migration: ${info}`);
  await new Promise((r) => setTimeout(r, 20));
}
await new Promise((r) => setTimeout(r, 300));
const moved = ports
  .map((port, i) => {
    let ranges = [[shards[i][0], shards[i][1]]];
    if (i === from) ranges = [[shards[i][0], slot - 1], [slot + 1, shards[i][1]]];
    if (i === to) ranges.push([slot, slot]);
    const text = ranges.filter(([a, b]) => a <= b).map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`));
    return `${String(i + 1).repeat(40)} 127.0.0.1 ${port} master - ${text.join(' ')}`;
  })
  .join('\n');
for (const port of ports) {
  const c = await admin(port);
  check((await c.sendCommand(['CLUSTERX', 'SETNODES', moved, '2'])) === 'OK', `SETNODES 2 on ${port}`);
  await c.quit();
}
await new Promise((r) => setTimeout(r, 300));
stop = true;
const target = await admin(ports[to]);
for (const [key, acked] of await Promise.all(writers)) {
  check(acked > 0, `${key}: nothing acknowledged`);
  const counted = Number((await target.sendCommand(['CMS.QUERY', key, 'x']))[0]);
  check(counted === acked, `${key}: ${acked} acknowledged, ${counted} on the target`);
}
await source.quit();
await target.quit();
await cluster.quit();
await one.quit();
console.log(`node-redis cluster: ${want.length} answers as one server's, over ${ports.length} nodes; slot ${slot} migrated under writers`);

// A dump and restore through node-redis's own helpers (bf.scanDump / bf.loadChunk,
// cf.scanDump / cf.loadChunk), as its test suite makes one: node-redis reads RESP
// integers as JavaScript numbers, so every iterator must come back exact. In RESP2 and
// RESP3, for a Bloom and a cuckoo filter of many chunks; every item must be found in
// the copy and its INFO must equal the source's. Usage: node dump.mjs PORT
import { createClient, RESP_TYPES } from 'redis';

const port = Number(process.argv[2]);
const items = Array.from({ length: 3000 }, (_, i) => `item-${i}`);

function check(ok, what) {
  if (!ok) {
    console.error(`node-redis dump: ${what}`);
    process.exit(1);
  }
}

async function roundTrip(client, family) {
  const api = client[family];
  await client.del([`${family}:src`, `${family}:copy`]);
  for (let i = 0; i < items.length; i += 500) {
    if (family === 'bf') await api.mAdd(`${family}:src`, items.slice(i, i + 500));
    else await api.insert(`${family}:src`, items.slice(i, i + 500));
  }
  const chunks = [];
  let iterator = 0;
  for (;;) {
    const { iterator: next, chunk } = await api.scanDump(`${family}:src`, iterator);
    if (next === 0) break;
    check(Number.isSafeInteger(next), `${family} iterator ${next} is not exact in a double`);
    chunks.push([next, chunk]);
    iterator = next;
  }
  check(chunks.length > 1, `${family}: expected several chunks, got ${chunks.length}`);
  for (const [it, chunk] of chunks) {
    const reply = await api.loadChunk(`${family}:copy`, it, chunk);
    check(String(reply) === 'OK', `${family} LOADCHUNK ${it} answered ${reply}`);
  }
  const found = await client.sendCommand([`${family.toUpperCase()}.MEXISTS`, `${family}:copy`, ...items]);
  check(found.every(Boolean), `${family}: an item is missing from the copy`);
  const [a, b] = [await api.info(`${family}:src`), await api.info(`${family}:copy`)];
  check(JSON.stringify(a) === JSON.stringify(b), `${family} INFO differs: ${JSON.stringify(a)} ${JSON.stringify(b)}`);
  return chunks.length;
}

for (const RESP of [2, 3]) {
  const client = createClient({ socket: { host: '127.0.0.1', port }, RESP })
    .withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer });
  client.on('error', (e) => check(false, `client error: ${e}`));
  await client.connect();
  const bf = await roundTrip(client, 'bf');
  const cf = await roundTrip(client, 'cf');
  console.log(`node-redis dump (RESP${RESP}): Bloom ${bf} chunks, cuckoo ${cf} chunks restored`);
  await client.quit();
}

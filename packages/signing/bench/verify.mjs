// Micro-benchmark, not a test: run with `pnpm --filter @postel/signing bench`.
// Prints operations per second for a 1 KB body, the median of 5 rounds of about 1 s each.
import { randomBytes } from "node:crypto";
import { createSigner, createVerifier, generateKeyPair, generateSecret } from "../dist/index.js";

const ROUNDS = 5;
const ROUND_MS = 1000;
const body = randomBytes(1024);
const timestamp = Math.floor(Date.now() / 1000);
const now = timestamp * 1000;

function opsPerSecond(operation) {
  const rates = [];
  for (let round = 0; round < ROUNDS; round++) {
    let count = 0;
    const start = performance.now();
    let elapsed = 0;
    while (elapsed < ROUND_MS) {
      // Check the clock every 64 operations so timing overhead stays out of the measurement.
      for (let i = 0; i < 64; i++) operation();
      count += 64;
      elapsed = performance.now() - start;
    }
    rates.push((count * 1000) / elapsed);
  }
  rates.sort((a, b) => a - b);
  return rates[Math.floor(ROUNDS / 2)];
}

const secret = generateSecret();
const pair = generateKeyPair();
const hmacSigner = createSigner(secret);
const edSigner = createSigner(pair.privateKey);
const hmacRequest = { body, headers: hmacSigner.sign("msg_bench", timestamp, body) };
const edRequest = { body, headers: edSigner.sign("msg_bench", timestamp, body) };
const hmacVerifier = createVerifier(secret);
const edVerifier = createVerifier(pair.publicKey);
const rotatingVerifier = createVerifier([generateSecret(), generateSecret(), secret]);

const cases = [
  ["verify v1 (HMAC-SHA256)", () => hmacVerifier.verify(hmacRequest, now)],
  ["verify v1 (3 keys, match on the last)", () => rotatingVerifier.verify(hmacRequest, now)],
  ["verify v1a (Ed25519)", () => edVerifier.verify(edRequest, now)],
  ["sign v1 (createSigner)", () => hmacSigner.sign("msg_bench", timestamp, body)],
  ["sign v1a (createSigner)", () => edSigner.sign("msg_bench", timestamp, body)],
];

console.log(`Node ${process.version}, 1 KB body, median of ${ROUNDS} rounds of ~${ROUND_MS} ms\n`);
console.log("| operation | ops/s |");
console.log("|---|---:|");
for (const [name, operation] of cases) {
  console.log(`| ${name} | ${Math.round(opsPerSecond(operation)).toLocaleString("en-US")} |`);
}

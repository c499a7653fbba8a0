let warned = false;

/** What is printed, once per process, when workers start with credentials in plain text. */
export const PLAINTEXT_WARNING =
  "Postel: endpoint signing secrets and custom header values are stored in plain text. To encrypt them, " +
  'pass outbound.credentials: { keys: [{ id: "k1", key: <32 bytes, e.g. `openssl rand -base64 32`> }] } ' +
  "and run postel.outbound.credentials.reencrypt() once; to keep plain text and silence this, pass " +
  'outbound.credentials: { encryption: "off" }.';

/** Prints `PLAINTEXT_WARNING` on stderr the first time it is called in this process; true when it did. */
export function warnPlaintextOnce(): boolean {
  if (warned) return false;
  warned = true;
  console.warn(PLAINTEXT_WARNING);
  return true;
}

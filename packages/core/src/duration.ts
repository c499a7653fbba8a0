// Durations are parsed where the receiving gate lives (`@postel/signing/inbound`), so both sides read
// "30s" the same way and throw the same InvalidInputError.
export { type Duration, formatDuration, parseDuration, toMs } from "@postel/signing/inbound";

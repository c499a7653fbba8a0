import { existsSync, mkdirSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

/** Debian's Chromium; CI installs it (.ci/run). Override with POSTEL_CHROMIUM. */
export const CHROMIUM = process.env["POSTEL_CHROMIUM"] ?? "/usr/bin/chromium";
/** Screenshots of every page, kept as test artifacts. */
export const ARTIFACTS = new URL("../../../test-artifacts/", import.meta.url).pathname;

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`No Chromium at ${CHROMIUM}: apt-get install -y chromium (or set POSTEL_CHROMIUM).`);
  }
  mkdirSync(ARTIFACTS, { recursive: true });
  // --no-sandbox: CI and these machines run as root, where Chromium's sandbox cannot start.
  return chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"], headless: true });
}
